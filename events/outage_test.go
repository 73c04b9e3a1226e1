package events_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/events"
)

// A JetStream outage longer than one attempt at a new consumer (the server
// stopped for 12 s, then started again on its storage) leaves the live
// subscribers attached: the fan-out follows the stream again after the
// last event it handed out, and each subscriber gets the events published
// after the outage, in order, once each, on the same subscription, with no
// error.
func TestSubscribersStayAttachedThroughAJetStreamOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a NATS server for longer than a consumer attempt")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true}
	start := func() *natsserver.Server {
		ns, err := natsserver.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		ns.Start()
		if !ns.ReadyForConnections(10 * time.Second) {
			t.Fatal("NATS did not start")
		}
		return ns
	}
	ns := start()
	defer func() { ns.Shutdown() }()
	nc, err := nats.Connect(ns.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	bus, err := events.NewBus(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	publish := func(id string) {
		t.Helper()
		for {
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			err := bus.Publish(pctx, events.Event{Source: events.SourcePayments, ID: id, Name: "IndividualActivated"})
			pcancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("publishing %s: %v", id, err)
			}
			time.Sleep(100 * time.Millisecond) // JetStream still starting
		}
	}
	cursor, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := bus.Subscribe(ctx, events.Filter{Names: []string{"IndividualActivated"}}, cursor)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		publish(fmt.Sprintf("o-%d", i))
	}
	if err := receiveInOrder(ctx, sub, "o-", 0, 3); err != nil {
		t.Fatal(err)
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	// Longer than the one attempt nats.go makes at a new consumer (10 s):
	// the fan-out's own attempts must bring it back.
	time.Sleep(12 * time.Second)
	ns = start()
	for i := 3; i < 6; i++ {
		publish(fmt.Sprintf("o-%d", i))
	}
	if err := receiveInOrder(ctx, sub, "o-", 3, 6); err != nil {
		t.Fatalf("after the outage: %v", err)
	}
	select {
	case ev, ok := <-sub.C:
		if !ok {
			t.Fatalf("the subscription ended: %v", sub.Err())
		}
		t.Fatalf("an event more: %s", ev.ID)
	default:
	}
	if err := sub.Err(); err != nil {
		t.Errorf("the subscription has an error: %v", err)
	}
}
