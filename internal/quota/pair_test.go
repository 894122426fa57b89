package quota

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func utc(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

// A monthly budget holds its spend for the whole calendar month, whatever the month's
// length, and starts afresh at 00:00 UTC on the first of the next.
func TestMonthlyBudgetRollsAtTheCalendarMonth(t *testing.T) {
	for _, tc := range []struct{ in, last, next string }{
		{"2026-02-01T00:00:00Z", "2026-02-28T23:59:59.999999999Z", "2026-03-01T00:00:00Z"},
		{"2028-02-10T12:00:00Z", "2028-02-29T23:59:59Z", "2028-03-01T00:00:00Z"}, // leap year
		{"2026-12-31T23:00:00Z", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{"2026-04-15T00:00:00+14:00", "2026-04-30T23:59:59Z", "2026-05-01T00:00:00Z"},
	} {
		b := NewMonthlyBudget(10)
		if !b.Reserve(10, utc(tc.in)) {
			t.Fatalf("%s: the month's whole budget refused", tc.in)
		}
		b.Charge(10, 10, utc(tc.in))
		if b.Reserve(1, utc(tc.last)) {
			t.Errorf("%s: reserved at %s, the same month's last moment, beyond the limit", tc.in, tc.last)
		}
		got := []float64{b.Spent(utc(tc.last)), b.Fraction(utc(tc.last))}
		if diff := cmp.Diff([]float64{10, 1}, got); diff != "" {
			t.Errorf("%s: spent and fraction on the month's last moment (-want +got):\n%s", tc.in, diff)
		}
		if !b.Reserve(10, utc(tc.next)) {
			t.Errorf("%s: the next month (%s) did not start afresh", tc.in, tc.next)
		}
	}
}

func TestMonthOf(t *testing.T) {
	s, e := MonthOf(utc("2026-02-14T10:00:00Z"))
	got := []string{time.Unix(0, s).UTC().Format(time.RFC3339), time.Unix(0, e).UTC().Format(time.RFC3339)}
	if diff := cmp.Diff([]string{"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}, got); diff != "" {
		t.Fatal(diff)
	}
}

// A Pair reserves from its day and its month together or not at all: a refusal by either
// leaves the other untouched, and the day's rollover leaves the month's spend standing.
func TestPairAllOrNothing(t *testing.T) {
	now := utc("2026-03-10T08:00:00Z")
	p := NewPair(5, 12)
	for range 5 {
		if !p.Reserve(1, now) {
			t.Fatal("refused within both limits")
		}
		p.Charge(1, 1, now)
	}
	if p.Reserve(1, now) {
		t.Fatal("reserved beyond the daily limit")
	}
	if got := p.Month.Used(now); got != 5 {
		t.Fatalf("a refusal by the day took from the month: used %v, want 5", got)
	}
	tomorrow := now + int64(24*time.Hour)
	for range 5 {
		if !p.Reserve(1, tomorrow) {
			t.Fatal("the next day refused within both limits")
		}
		p.Charge(1, 1, tomorrow)
	}
	twoDays := tomorrow + int64(24*time.Hour)
	if !p.Reserve(2, twoDays) {
		t.Fatal("refused the month's last 2 credits")
	}
	p.Refund(2, twoDays)
	if got := []float64{p.Day.Used(twoDays), p.Month.Used(twoDays)}; !cmp.Equal(got, []float64{0, 10}) {
		t.Fatalf("after a refund: day and month used %v, want [0 10]", got)
	}
	if p.Reserve(3, twoDays) {
		t.Fatal("reserved beyond the monthly limit")
	}
	if got := p.Day.Used(twoDays); got != 0 {
		t.Fatalf("a refusal by the month took from the day: used %v, want 0", got)
	}
	if f := p.Fraction(twoDays); f < 10.0/12-1e-9 || f > 10.0/12+1e-9 {
		t.Fatalf("fraction %v, want the month's 10/12", f)
	}
}
