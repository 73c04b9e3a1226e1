// Package engine runs or connects to the NATS JetStream engine that every
// gateway replica shares: embedded in-process by default (storage under the
// data directory), or an external cluster named by URL when one machine is
// no longer enough. Key-value buckets (order attempts, sessions) and the
// event stream are all built on it, so one machine and many behave alike.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config selects the engine.
type Config struct {
	// URL of an external NATS cluster with JetStream; empty embeds a server.
	URL string
	// DataDir holds the embedded server's storage.
	DataDir string
	// Replicas is how many copies of each stream and bucket are kept: 1
	// (the default) on one server, 3 on a cluster, so that losing a node
	// loses nothing.
	Replicas int
	Logger   *slog.Logger
}

// Engine is a live JetStream connection, and the embedded server when there
// is one.
type Engine struct {
	replicas int
	server   *server.Server
	conn     *nats.Conn
	js       jetstream.JetStream
	logger   *slog.Logger
}

// Open starts the embedded server (when cfg.URL is empty) and connects.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{logger: cfg.Logger, replicas: max(cfg.Replicas, 1)}
	opts := []nats.Option{
		nats.Name("fingraph"),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				cfg.Logger.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { cfg.Logger.Info("nats reconnected") }),
	}
	url := cfg.URL
	if url == "" {
		if cfg.DataDir == "" {
			return nil, errors.New("engine: a data directory is required for embedded JetStream")
		}
		ns, err := server.NewServer(&server.Options{
			ServerName: "fingraph-embedded",
			JetStream:  true,
			StoreDir:   cfg.DataDir,
			DontListen: true,
			NoSigs:     true,
			NoLog:      true,
		})
		if err != nil {
			return nil, fmt.Errorf("engine: embedded NATS: %w", err)
		}
		ns.Start()
		if !ns.ReadyForConnections(10 * time.Second) {
			ns.Shutdown()
			return nil, errors.New("engine: embedded NATS did not become ready")
		}
		e.server = ns
		opts = append(opts, nats.InProcessServer(ns))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("engine: connect to NATS: %w", err)
	}
	e.conn = nc
	js, err := jetstream.New(nc)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("engine: JetStream: %w", err)
	}
	e.js = js
	if err := e.waitForJetStream(ctx, url); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// jetStreamWait bounds how long Open waits for JetStream to answer: a
// cluster that starts with the gateways elects its leader in seconds.
const jetStreamWait = time.Minute

// waitForJetStream returns once JetStream answers. A server without
// JetStream is refused at once; a cluster still electing its leader, or
// without its quorum, is waited for (and said so), up to jetStreamWait.
func (e *Engine) waitForJetStream(ctx context.Context, url string) error {
	deadline := time.Now().Add(jetStreamWait)
	said := false
	for {
		_, err := e.js.AccountInfo(ctx)
		if err == nil {
			if said {
				e.logger.Info("JetStream answers")
			}
			return nil
		}
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return fmt.Errorf("engine: JetStream is not enabled on %s: %w", describe(url), err)
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("engine: JetStream on %s did not answer within %v: %w", describe(url), jetStreamWait, err)
		}
		if !said {
			e.logger.Warn("waiting for JetStream to answer (a cluster elects its leader, or has lost its quorum)", "err", err)
			said = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func describe(url string) string {
	if url == "" {
		return "the embedded server"
	}
	return "the NATS server"
}

// Replicas is how many copies of each stream and bucket the gateway keeps;
// every stream or bucket made on the engine takes it (StreamReplicas).
func (e *Engine) Replicas() int { return e.replicas }

// Embedded reports whether the engine runs in-process.
func (e *Engine) Embedded() bool { return e.server != nil }

// JetStream returns the JetStream context.
func (e *Engine) JetStream() jetstream.JetStream { return e.js }

// KeyValue opens (creating or updating) a key-value bucket whose entries
// expire after ttl.
func (e *Engine) KeyValue(ctx context.Context, bucket string, ttl time.Duration) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := e.Create(ctx, "key-value bucket "+bucket, func(ctx context.Context) error {
		var err error
		kv, err = e.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   bucket,
			TTL:      ttl,
			Storage:  jetstream.FileStorage,
			History:  1,
			Replicas: e.replicas,
		})
		return err
	}, "KV_"+bucket)
	if err != nil {
		return nil, fmt.Errorf("engine: key-value bucket %s: %w", bucket, e.Placement(err))
	}
	return kv, nil
}

// Create runs create, which makes or updates a stream or bucket, until it
// answers, for up to jetStreamWait, and then waits until each of streams
// (the streams create made or updated) has a leader.
//
// Asking again: on a cluster, two replicas that start at once and create
// the same stream can both see their requests go unanswered, or one's
// create lose to the other's; the stream exists after the first round, and
// the repeat only confirms it. Other answers are returned at once.
//
// Waiting for the leader: a stream made with one copy has no replication
// group; raising it to more copies starts one, and JetStream answers the
// update before that group has elected its leader. Until it has, writes and
// reads of the stream are dropped unanswered, so a caller that used the
// stream at once would wait out its whole deadline (a gateway's start on a
// cluster raised from one copy to three).
func (e *Engine) Create(ctx context.Context, what string, create func(context.Context) error, streams ...string) error {
	deadline := time.Now().Add(jetStreamWait)
	for {
		// Shorter than the client's default (5 s): an answer that will
		// come is quick.
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		err := create(actx)
		cancel()
		if err == nil {
			break
		}
		// A create-or-update that found no stream and then lost the
		// create to another replica's is asked again: it updates now.
		if !(unanswered(err) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse)) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		e.logger.Info("JetStream did not answer in time, or another replica created the same at once; asking again", "creating", what, "err", err)
	}
	for _, stream := range streams {
		if err := e.waitForLeader(ctx, what, stream, deadline); err != nil {
			return err
		}
	}
	return nil
}

// askTimeout bounds each request Create, waitForLeader and Ask make.
const askTimeout = 2 * time.Second

func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}

// Ask runs ask, one request to a stream or bucket, until it is answered or
// ctx ends, each attempt bounded by askTimeout. A request in flight when the
// stream's leader is lost, or when the connection to its server drops, is
// never answered: the new leader does not see it. Without a bound of its
// own the caller would wait out its whole deadline (a client's request)
// for a reply that cannot come, while the stream answers again within
// seconds. attempt counts from 0: an attempt after the first may find what
// an unanswered one did (a key it created, a revision it wrote), and ask
// must take that into account.
func Ask(ctx context.Context, ask func(ctx context.Context, attempt int) error) error {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		err := ask(actx, attempt)
		cancel()
		if err == nil || ctx.Err() != nil ||
			!(unanswered(err) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)) {
			return err
		}
	}
}

// waitForLeader returns once stream has a leader (a stream on a server that
// is not clustered always has), asking JetStream until deadline.
func (e *Engine) waitForLeader(ctx context.Context, what, stream string, deadline time.Time) error {
	said := false
	for {
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		info, err := e.streamInfo(actx, stream)
		cancel()
		if err == nil && (info.Cluster == nil || info.Cluster.Leader != "") {
			if said {
				e.logger.Info("stream has its leader", "creating", what, "stream", stream)
			}
			return nil
		}
		// A server whose view of the cluster lags the create's may not
		// know the stream yet: that passes as the election does.
		if err != nil && !unanswered(err) && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("stream %s has no leader after %v", stream, jetStreamWait)
			}
			return err
		}
		if !said {
			e.logger.Info("waiting for the stream to elect its leader (its copies were raised, or its cluster is electing)", "creating", what, "stream", stream)
			said = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (e *Engine) streamInfo(ctx context.Context, stream string) (*jetstream.StreamInfo, error) {
	s, err := e.js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	return s.CachedInfo(), nil
}

// JetStream's codes for copies it cannot place.
const (
	errInsufficientResources = 10023 // fewer servers than copies
	errReplicasNotSupported  = 10074 // copies asked of a server that is not clustered
)

// Placement explains a refusal to place the configured copies (a count
// larger than the cluster, or copies on a server that is not clustered) in
// words that name the setting; other errors pass unchanged.
func (e *Engine) Placement(err error) error {
	var api *jetstream.APIError
	if e.replicas > 1 && errors.As(err, &api) && (api.ErrorCode == errInsufficientResources || api.ErrorCode == errReplicasNotSupported ||
		strings.Contains(strings.ToLower(api.Description), "replicas")) {
		return fmt.Errorf("FINGRAPH_NATS_REPLICAS: %d copies of each stream and bucket cannot be placed; the NATS cluster needs at least %d JetStream servers: %w",
			e.replicas, e.replicas, err)
	}
	return err
}

// Ready reports whether JetStream answers now.
func (e *Engine) Ready(ctx context.Context) error {
	if e.conn == nil || !e.conn.IsConnected() {
		return errors.New("nats: not connected")
	}
	if _, err := e.js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	return nil
}

// Close drains the connection and stops the embedded server.
func (e *Engine) Close() {
	if e.conn != nil {
		_ = e.conn.Drain()
		// Drain is asynchronous; wait for it so the server stops cleanly.
		for i := 0; i < 100 && !e.conn.IsClosed(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		e.conn.Close()
	}
	if e.server != nil {
		e.server.Shutdown()
		e.server.WaitForShutdown()
	}
}
