package redisstore

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
)

// fleet is n Stores on one redis-server and prefix, each with its own go-redis client,
// sharing a virtual clock: replicas.
type fleet struct {
	t      *testing.T
	srv    string
	prefix string
	clk    *clock
	st     []*Store
	rdb    *redis.Client // an observer
	ctx    context.Context
}

func newFleet(t *testing.T, n int, addr string) *fleet {
	fl := &fleet{t: t, srv: addr, prefix: prefixFor(t), clk: newClock(t0), ctx: context.Background()}
	fl.rdb = newClient(t, addr)
	for range n {
		fl.add(addr)
	}
	return fl
}

func (fl *fleet) add(addr string, opts ...Option) *Store {
	opts = append([]Option{WithPrefix(fl.prefix), withClock(fl.clk), WithTimeout(time.Second)}, opts...)
	st, err := New(newClient(fl.t, addr), opts...)
	if err != nil {
		fl.t.Fatal(err)
	}
	fl.t.Cleanup(func() {
		st.blocks.wg.Wait()
		for _, l := range st.blocks.all() {
			l.stop()
		}
	})
	fl.st = append(fl.st, st)
	return st
}

func (fl *fleet) wait() {
	for _, st := range fl.st {
		st.blocks.wg.Wait()
	}
}

// call admits one call of credits against daily on st and, when granted, settles it as
// sent at that cost. It reports whether it was granted.
func (fl *fleet) call(st *Store, credits, daily float64) bool {
	a := translate.Admission{Now: fl.clk.now(), Engine: "paid", Credits: credits, Daily: daily, LeaseTTL: 5 * time.Second}
	got, err := st.Admit(fl.ctx, a)
	if err != nil || got.Lease == "" {
		return false
	}
	if err := st.Settle(fl.ctx, translate.Settlement{Lease: got.Lease, Sent: true, Credits: credits}); err != nil {
		fl.t.Fatal(err)
	}
	return true
}

// spent is the day's spend as Redis counts it, after every replica returned its blocks.
func (fl *fleet) spent() (spent, reserved float64) {
	fl.wait()
	for _, st := range fl.st {
		if err := st.Flush(fl.ctx); err != nil {
			fl.t.Fatal(err)
		}
	}
	v := fl.rdb.HMGet(fl.ctx, newKeys(fl.prefix).budget(t0.Truncate(24*time.Hour)), "s", "r").Val()
	return num(v[0]), num(v[1])
}

// commandCalls sums the calls of every command in INFO commandstats, and of EVALSHA alone.
func commandCalls(t *testing.T, rdb *redis.Client) (all, evalsha int64) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		if name == "cmdstat_info" || name == "cmdstat_config|resetstat" {
			continue
		}
		all += n
		if name == "cmdstat_evalsha" {
			evalsha = n
		}
	}
	return all, evalsha
}

// Eight replicas under Zipf(1.1)-skewed demand (8,000 calls/s in all, 1 credit each)
// spend a budget of 400,000 credits: at least 99.9% of it is spent, nothing more, and the
// budget costs at most 1e-3 round trips to Redis per call (EVALSHA of the block script,
// from INFO commandstats).
func TestZipfReplicasSpendTheBudget(t *testing.T) {
	srv := ownServer(t)
	fl := newFleet(t, 8, srv.Addr)
	const daily, rate = 400_000.0, 8000.0
	weights := make([]float64, 8)
	sum := 0.0
	for i := range weights {
		weights[i] = 1 / math.Pow(float64(i+1), 1.1)
		sum += weights[i]
	}
	if err := fl.rdb.ConfigResetStat(fl.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	z := zipfRun{fl: fl, daily: daily, rate: rate, weights: weights, sum: sum}
	z.run(t)
	granted, demanded, steady := z.granted, z.demanded, z.steady
	all, evalsha := commandCalls(t, fl.rdb)
	spent, reserved := fl.spent()
	perSteady := float64(steady[1]-steady[0]) / (0.8 * daily)
	t.Logf("%d calls asked, %.0f granted; Redis: %d EVALSHA (%.2e per call; %.2e from 10%% to 90%% of the budget), %d commands in all (%.2e per call)",
		demanded, granted, evalsha, float64(evalsha)/granted, perSteady, all, float64(all)/granted)
	if granted > daily || spent > daily+1e-6 {
		t.Errorf("granted %.0f, Redis counts %.0f spent: over the budget of %.0f", granted, spent, daily)
	}
	if spent != granted || reserved > 1e-6 {
		t.Errorf("after Flush Redis counts %.3f spent and %.3f reserved, want %.0f and 0", spent, reserved, granted)
	}
	if frac := granted / daily; frac < 0.999 {
		t.Errorf("%.4f%% of the budget spent, want at least 99.9%%", 100*frac)
	}
	if perSteady > 1e-3 {
		t.Errorf("%.2e round trips per call for the budget in steady state, want at most 1e-3", perSteady)
	}
	if per := float64(evalsha) / granted; per > 3e-3 {
		t.Errorf("%.2e round trips per call for the budget over the whole run, want at most 3e-3", per)
	}
}

// zipfRun is the load of TestZipfReplicasSpendTheBudget: each replica asks for its weight's
// share of rate calls per second, in 10 ms steps, until no call was granted for two
// virtual seconds.
type zipfRun struct {
	fl               *fleet
	daily, rate, sum float64
	weights          []float64
	granted          float64
	demanded         int
	steady           [2]int64 // EVALSHA calls at 10% and at 90% of the budget
}

func (z *zipfRun) run(t *testing.T) {
	const step = 10 * time.Millisecond
	owed := make([]float64, len(z.fl.st)) // demand carried to the next step
	for idle := 0; idle < 200; {
		z.fl.clk.add(step)
		before := z.granted
		for i, st := range z.fl.st {
			owed[i] += z.rate * step.Seconds() * z.weights[i] / z.sum
			for ; owed[i] >= 1; owed[i]-- {
				z.demanded++
				if z.fl.call(st, 1, z.daily) {
					z.granted++
				}
			}
		}
		z.fl.wait() // a refill lands within the step it was asked in
		for i, at := range []float64{0.1, 0.9} {
			if before < at*z.daily && z.granted >= at*z.daily {
				_, z.steady[i] = commandCalls(t, z.fl.rdb)
			}
		}
		idle++
		if z.granted > before {
			idle = 0
		}
	}
}

// Calls whose costs do not add up exactly in floating point (0.0072 + 0.0072 + 0.33), all in
// flight at once and then settled, leave the block with nothing in flight, so Flush returns
// it: nothing stays reserved in Redis. (A float sum of reservations and releases left
// 1e-18 in flight, and Flush kept the block.)
func TestFlushReturnsABlockAfterInexactCosts(t *testing.T) {
	fl := newFleet(t, 1, needServer(t).Addr)
	st := fl.st[0]
	costs := []float64{0.0072, 0.0072, 0.33} // in flight together: 5.6e-17 left as a float sum
	var leases []string
	for _, c := range costs {
		got, err := st.Admit(fl.ctx, translate.Admission{Now: fl.clk.now(), Engine: "paid", Credits: c, Daily: 100, LeaseTTL: 5 * time.Second})
		if err != nil || got.Lease == "" {
			t.Fatalf("Admit %v: %+v, %v", c, got, err)
		}
		leases = append(leases, got.Lease)
	}
	for i, l := range leases {
		if err := st.Settle(fl.ctx, translate.Settlement{Lease: l, Sent: true, Credits: costs[i] / 2}); err != nil {
			t.Fatal(err)
		}
	}
	spent, reserved := fl.spent()
	want := 0.0
	for _, c := range costs {
		want += c / 2
	}
	if reserved != 0 || math.Abs(spent-want) > 1e-9 {
		t.Errorf("after Flush Redis holds %g spent and %g reserved, want %g and 0", spent, reserved, want)
	}
}
