package redisstore

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
)

// pushIfPending sends what this Client did while Redis was unreachable, in one round trip.
func (s *Store) pushIfPending(ctx context.Context) error {
	ops, done := s.loc.take(s.o.now())
	if ops == nil {
		return nil
	}
	b, err := json.Marshal(ops)
	if err == nil {
		err = s.sc.push.Run(ctx, s.rdb, []string{s.k.leases(), s.k.swept()}, string(b)).Err()
	}
	done(err == nil)
	if err != nil {
		return err
	}
	s.log.Debug("redisstore: pushed what was decided locally", slog.Int("operations", len(ops)))
	s.recovered()
	return nil
}

// Flush pushes to Redis what this Store decided alone while Redis was unreachable: spend
// from its local share, settlements, holds and request-id answers. Each attempt waits at
// most WithTimeout; Flush returns once nothing waits, or with the error of the call that
// failed, or when ctx ends. Call it when a replica stops gracefully, after its last
// request: what a Store never pushed is unknown to the other replicas, which would spend
// it again.
func (s *Store) Flush(ctx context.Context) error {
	for {
		waiting, pushing := s.loc.pending()
		switch {
		case !waiting:
			return nil
		case pushing != nil: // another call's push: wait for it, then look again
			select {
			case <-pushing:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		pctx, cancel := context.WithTimeout(ctx, s.o.timeout)
		err := s.pushIfPending(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.failed(err)
			}
			return err
		}
	}
}

func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
