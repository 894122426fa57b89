package drill

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConfigDefaults: every zero field gets the default its comment states, At follows
// Duration, set fields are kept, and each out-of-range field is refused.
func TestConfigDefaults(t *testing.T) {
	for _, tc := range []struct {
		in, want Config
	}{
		{Config{Scenario: KillTop}, Config{Scenario: KillTop, Rate: 200, Duration: 20 * time.Second, At: 5 * time.Second,
			Seed: 1, LatencyScale: 1, Timeout: time.Second, Deadline: 3 * time.Second}},
		{Config{Scenario: SlowEngine, Duration: 8 * time.Second}, Config{Scenario: SlowEngine, Rate: 200, Duration: 8 * time.Second,
			At: 2 * time.Second, Seed: 1, LatencyScale: 1, Timeout: time.Second, Deadline: 3 * time.Second}},
		{Config{Scenario: QuotaOut, Rate: 5, Duration: time.Second, At: time.Millisecond, Seed: 7, LatencyScale: 2,
			Timeout: 3, Deadline: 4, Cooldown: 5, Budget: 6}, Config{Scenario: QuotaOut, Rate: 5, Duration: time.Second,
			At: time.Millisecond, Seed: 7, LatencyScale: 2, Timeout: 3, Deadline: 4, Cooldown: 5, Budget: 6}},
	} {
		got, err := tc.in.withDefaults()
		if err != nil {
			t.Errorf("%+v: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v with defaults (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, bad := range []Config{
		{Scenario: 0}, {Scenario: 5},
		{Scenario: KillTop, Rate: -1}, {Scenario: KillTop, Rate: math.NaN()}, {Scenario: KillTop, Rate: math.Inf(1)},
		{Scenario: KillTop, Duration: -1},
		{Scenario: KillTop, At: -1}, {Scenario: KillTop, Duration: time.Second, At: time.Second},
		{Scenario: KillTop, LatencyScale: -1}, {Scenario: KillTop, LatencyScale: math.NaN()},
		{Scenario: KillTop, Timeout: -1}, {Scenario: KillTop, Deadline: -1}, {Scenario: KillTop, Cooldown: -1},
		{Scenario: KillTop, Budget: -1}, {Scenario: KillTop, Budget: math.NaN()},
	} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
