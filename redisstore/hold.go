package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
)

// Hold polling (WithHoldPoll).
const (
	defaultHoldPoll = 500 * time.Millisecond
	minHoldPoll     = 10 * time.Millisecond
	maxHoldPoll     = 10 * time.Second
)

// maxWatched bounds the engines one reading of the holds asks for; maxProbeLock bounds a
// probe lock's life.
const (
	maxWatched   = 1000
	maxProbeLock = 10 * time.Minute
)

var (
	_ translate.HoldStore      = (*Store)(nil)
	_ translate.StoreValidator = (*Store)(nil)
)

// errZeroStore: a Store not built with New.
var errZeroStore = errors.New("redisstore: the Store has no Redis client: build it with redisstore.New")

// Validate implements translate.StoreValidator: a Store not built with New (nil, or the
// zero Store) has no Redis client, and translate.New refuses it rather than let its
// methods panic on the Client's goroutines.
func (s *Store) Validate() error {
	if s == nil || s.rdb == nil {
		return errZeroStore
	}
	return nil
}

// WithHoldPoll sets how often each Client reads the engines' shared holds (one MGET of its
// configured engines' hold keys): an engine that one replica finds down is out of routing
// on the others within about this long. Default 500ms; 10ms..10s.
func WithHoldPoll(d time.Duration) Option { return func(o *options) { o.holdPoll = d } }

// WatchHolds implements translate.HoldStore: it reads the holds of the engines named every
// WithHoldPoll, and hands each reading to apply, until ctx ends. While Redis does not
// answer it hands nothing (and tries again once per probe period, like every other call).
func (s *Store) WatchHolds(ctx context.Context, engines func() []string, apply func([]translate.EngineHold)) {
	t := time.NewTicker(s.o.holdPoll)
	defer t.Stop()
	for {
		if holds, ok := s.readHolds(ctx, engines()); ok {
			apply(holds)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// readHolds reads the holds of the engines named in one round trip and keeps them as this
// Client's; ok false when Redis could not be read.
func (s *Store) readHolds(ctx context.Context, names []string) (holds []translate.EngineHold, ok bool) {
	names = names[:min(len(names), maxWatched)]
	if len(names) == 0 || !s.reachable() {
		return nil, false
	}
	ks := make([]string, len(names))
	for i, n := range names {
		ks[i] = s.k.hold(n)
	}
	rctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	vals, err := s.rdb.MGet(rctx, ks...).Result()
	cancel()
	if err == nil && len(vals) != len(ks) {
		err = errors.New("redisstore: malformed reply to MGET")
	}
	if err != nil {
		if ctx.Err() == nil && s.configError(err) == nil {
			s.failed(err)
		}
		return nil, false
	}
	s.recovered()
	now := s.o.now()
	for i, v := range vals {
		var h heldEngine
		str, found := v.(string)
		if found {
			h.kind, h.until = parseHold(str)
		}
		if h, held := s.loc.replaceHold(ks[i], names[i], h, found && h.until.After(now)); held {
			holds = append(holds, translate.EngineHold{Engine: names[i], Kind: h.kind, Until: h.until})
		}
	}
	return holds, true
}

// Unhold implements translate.HoldStore: it ends the engine's hold here at once and for the
// others at their next reading. While Redis is unreachable it ends it here only.
func (s *Store) Unhold(ctx context.Context, engine string) error {
	if engine == "" {
		return invalid("unhold needs an engine")
	}
	s.loc.unhold(s.k.hold(engine), engine)
	if !s.reachable() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.rdb.Del(ctx, s.k.hold(engine)).Err(); err != nil {
		if cerr := s.configError(err); cerr != nil {
			return cerr
		}
		s.failed(err)
		return nil
	}
	s.recovered()
	return nil
}

// errNoLock: Redis could not be asked for a probe lock.
var errNoLock = errors.New("redisstore: redis unreachable: probe lock unknown")

// ProbeLock implements translate.HoldStore: SET NX with a expiry of ttl (at most 10
// minutes) on the engine's probe lock. It is never released early: one probe runs at a
// time, and at most one per ttl across the replicas.
func (s *Store) ProbeLock(ctx context.Context, engine string, ttl time.Duration) (bool, error) {
	if engine == "" || ttl <= 0 {
		return false, invalid("probe lock needs an engine and a positive ttl")
	}
	if !s.reachable() {
		return false, errNoLock
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	ok, err := s.rdb.SetNX(ctx, s.k.probe(engine), "1", min(ttl, maxProbeLock)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		if cerr := s.configError(err); cerr != nil {
			return false, cerr
		}
		s.failed(err)
		return false, err
	}
	s.recovered()
	return ok, nil
}
