package clock

import (
	"context"
	"time"
)

// System is the real clock: Now is time.Now, and Sleep waits on a timer it stops. It has
// the method set of the translate package's Clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// Sleep waits for d or until ctx is done, whichever comes first, and returns ctx.Err() in
// the latter case (and at once when d is not positive).
func (System) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
