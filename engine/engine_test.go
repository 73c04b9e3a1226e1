package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/engine"
)

func TestEmbeddedStartsReadyAndStops(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	assert.True(t, e.Embedded())
	require.NoError(t, e.Ready(ctx))

	kv, err := e.KeyValue(ctx, "probe", time.Hour)
	require.NoError(t, err)
	_, err = kv.Put(ctx, "k", []byte("v"))
	require.NoError(t, err)
	st, err := kv.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, time.Hour, st.TTL())
	assert.Equal(t, int64(1), st.History(), "one value per key: buckets hold state, not logs")

	e.Close()
	assert.Error(t, e.Ready(ctx), "a closed engine is not ready")
}

func TestEmbeddedKeepsDataAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := engine.Open(ctx, engine.Config{DataDir: dir})
	require.NoError(t, err)
	kv, err := e.KeyValue(ctx, "durable", time.Hour)
	require.NoError(t, err)
	_, err = kv.Put(ctx, "k", []byte("kept"))
	require.NoError(t, err)
	e.Close()

	e, err = engine.Open(ctx, engine.Config{DataDir: dir})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	kv, err = e.KeyValue(ctx, "durable", 2*time.Hour)
	require.NoError(t, err, "reopening a bucket with another TTL updates it")
	got, err := kv.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "kept", string(got.Value()))
}

func TestEmbeddedNeedsADataDirectory(t *testing.T) {
	_, err := engine.Open(context.Background(), engine.Config{})
	assert.ErrorContains(t, err, "data directory")
}

// external starts a NATS server on loopback, as a cluster the gateway
// does not own.
func external(t *testing.T, jetStream bool) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: jetStream,
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(ns.Shutdown)
	require.True(t, ns.ReadyForConnections(10*time.Second))
	return ns
}

func TestExternalReadinessFollowsTheServer(t *testing.T) {
	ctx := context.Background()
	ns := external(t, true)
	e, err := engine.Open(ctx, engine.Config{URL: ns.ClientURL(), DataDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	assert.False(t, e.Embedded(), "a URL means no embedded server")
	require.NoError(t, e.Ready(ctx))

	ns.Shutdown()
	ns.WaitForShutdown()
	// Probes are bounded, as /readyz bounds them: a request in flight when
	// the server went away would otherwise wait for the JetStream API
	// timeout.
	require.Eventually(t, func() bool {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		return e.Ready(pctx) != nil
	}, 10*time.Second, 10*time.Millisecond,
		"readiness must follow the cluster's availability")
}

func TestExternalWithoutJetStreamIsRefused(t *testing.T) {
	ns := external(t, false)
	_, err := engine.Open(context.Background(), engine.Config{URL: ns.ClientURL()})
	require.Error(t, err)
	assert.ErrorContains(t, err, "JetStream is not enabled")
	assert.True(t, errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		"the cause is kept: %v", err)
}

func TestExternalUnreachableIsAnError(t *testing.T) {
	ns := external(t, true)
	url := ns.ClientURL()
	ns.Shutdown()
	ns.WaitForShutdown()
	_, err := engine.Open(context.Background(), engine.Config{URL: url})
	assert.ErrorContains(t, err, "connect to NATS")
}
