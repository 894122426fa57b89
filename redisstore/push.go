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

func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
