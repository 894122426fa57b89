package redisstore

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// pushIfPending sends the holds, request-id claims and answers this Client kept while Redis
// was unreachable: one pipeline of single-key scripts, which a cluster client splits by slot.
func (s *Store) pushIfPending(ctx context.Context) error {
	holds, answers, done := s.loc.take()
	if done == nil {
		return nil
	}
	now := s.o.now()
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for key, h := range holds {
			if left := h.until.Sub(now); left > 0 {
				s.sc.hold.Run(ctx, p, []string{key}, h.value, h.until.UnixMilli(), ms(left))
			}
		}
		for _, a := range answers {
			s.sc.answer.Run(ctx, p, []string{a.key}, a.engine, a.answer, a.ttl.Milliseconds())
		}
		return nil
	})
	// An answer at a key of another type is dropped, not pushed again.
	err = s.answersErr(cmds, err)
	if isNoScript(err) { // a pipeline does not fall back to EVAL: load the scripts once
		err = s.loadScripts(ctx)
		if err == nil {
			done(false)
			return s.pushIfPending(ctx)
		}
	}
	done(err == nil)
	if err != nil {
		return err
	}
	s.log.Debug("redisstore: pushed what was decided locally", slog.Int("operations", len(holds)+len(answers)))
	s.recovered()
	return nil
}

func isNoScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

func (s *Store) loadScripts(ctx context.Context) error {
	for _, sc := range []*redis.Script{s.sc.hold, s.sc.answer} {
		var err error
		if cc, ok := s.rdb.(*redis.ClusterClient); ok {
			err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
				return sc.Load(ctx, c).Err()
			})
		} else {
			err = sc.Load(ctx, s.rdb).Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Flush returns this Store's leased blocks to Redis (those with no call in flight; a block
// with one is charged as spent at most BlockTTL later, or returned by a later Flush) and
// pushes what it decided alone while Redis was unreachable: holds, request-id claims and
// answers. Each call to Redis waits at most WithTimeout; Flush returns once nothing waits,
// or with the first error, or when ctx ends. Call it when a replica stops gracefully,
// after its last request: a block never returned stays reserved until BlockTTL has passed
// and is then charged as spent. The Store stays usable: a later Admit leases a new block.
func (s *Store) Flush(ctx context.Context) error {
	err := s.returnBlocks(ctx)
	for {
		waiting, pushing := s.loc.pending()
		switch {
		case !waiting:
			return err
		case pushing != nil: // another call's push: wait for it, then look again
			select {
			case <-pushing:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		pctx, cancel := context.WithTimeout(ctx, s.o.timeout)
		perr := s.pushIfPending(pctx)
		cancel()
		if perr != nil {
			if ctx.Err() == nil {
				s.failed(perr)
			}
			return perr
		}
	}
}

// pushSoon pushes what waits when Redis is reachable.
func (s *Store) pushSoon(ctx context.Context) {
	if s.loc.isDegraded() {
		return
	}
	if waiting, _ := s.loc.pending(); !waiting {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	if err := s.pushIfPending(ctx); err != nil {
		s.failed(err)
	}
}

func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
