package translate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fanyi-go/translate"
)

// canaryConfig is a configuration with a stable engine and a canary serving share percent
// of the users.
func canaryConfig(t testing.TB, vendor string, share float64) *translate.Config {
	return rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "stable", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 90}},
	    {"name": "canary", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 50, "canary": %g}}
	  ]}`, vendor, vendor, share)
}

// canaryUsers sends one request per user and returns the users the canary served.
func canaryUsers(t *testing.T, c *translate.Client, users int) map[int]bool {
	t.Helper()
	in := map[int]bool{}
	for u := range users {
		r := req(fmt.Sprintf("hello %d", u))
		r.UserID = fmt.Sprintf("user-%d", u)
		res, err := c.Translate(context.Background(), r)
		if err != nil {
			t.Fatalf("user %d: %v", u, err)
		}
		if res.Engine == "canary" {
			in[u] = true
		}
	}
	return in
}

// TestCanaryRamp is a gray release through Reconfigure: 1% -> 5% -> 20% -> 100% of the
// users, each step keeping every user who was in (monotonic inclusion), each share about
// what it says; lowering the share to 0 stops the canary's traffic at the next request.
func TestCanaryRamp(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	const users = 2000
	c := newClient(t, translate.WithConfig(canaryConfig(t, vendor, 1)), translate.WithClock(newClock()))
	var prev map[int]bool
	for _, step := range []struct {
		share  float64
		lo, hi int // users in, a wide binomial band
	}{{1, 5, 45}, {5, 60, 140}, {20, 330, 470}, {100, users, users}} {
		if err := c.Reconfigure(canaryConfig(t, vendor, step.share)); err != nil {
			t.Fatalf("Reconfigure canary %g%%: %v", step.share, err)
		}
		in := canaryUsers(t, c, users)
		if n := len(in); n < step.lo || n > step.hi {
			t.Errorf("canary %g%%: %d of %d users in, want %d..%d", step.share, n, users, step.lo, step.hi)
		}
		lost := 0
		for u := range prev {
			if !in[u] {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("canary %g%%: %d users who were in are out (inclusion must be monotonic)", step.share, lost)
		}
		prev = in
	}

	// Roll back: the next request of every user goes to the stable engine.
	if err := c.Reconfigure(canaryConfig(t, vendor, 0)); err != nil {
		t.Fatal(err)
	}
	if in := canaryUsers(t, c, users); len(in) != 0 {
		t.Errorf(`after lowering "canary" to 0, %d of %d users still reached the canary; want none from the next request`,
			len(in), users)
	}
}

// TestCanaryRampDown: lowering a share keeps only users who were in (20% -> 5% is a subset).
func TestCanaryRampDown(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	const users = 1000
	c := newClient(t, translate.WithConfig(canaryConfig(t, vendor, 20)), translate.WithClock(newClock()))
	wide := canaryUsers(t, c, users)
	if err := c.Reconfigure(canaryConfig(t, vendor, 5)); err != nil {
		t.Fatal(err)
	}
	narrow := canaryUsers(t, c, users)
	for u := range narrow {
		if !wide[u] {
			t.Errorf("user %d is in the 5%% but was not in the 20%%", u)
		}
	}
	if len(narrow) == 0 || len(narrow) >= len(wide) {
		t.Errorf("5%%: %d users, 20%%: %d users", len(narrow), len(wide))
	}
}

// TestCanaryPromotion: a canary whose "canary" is left out of the next config is a normal
// engine, and requests without a UserID reach it by weight; "canary": 0 instead stops it.
func TestCanaryPromotion(t *testing.T) {
	rcType()
	vendor := rcVendorFor(t, &rcVendor{})
	promoted := rcParse(t, `{"cache": {"disabled": true}, "engines": [
	    {"name": "stable", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 50}},
	    {"name": "canary", "type": "rc", "settings": {"vendor": %q}, "profile": {"quality": 90}}
	  ]}`, vendor, vendor)
	c := newClient(t, translate.WithConfig(canaryConfig(t, vendor, 100)), translate.WithClock(newClock()))
	served := func() int {
		n := 0
		for i := range 200 {
			res, err := c.Translate(context.Background(), req(fmt.Sprintf("anonymous %d", i)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Engine == "canary" {
				n++
			}
		}
		return n
	}
	if n := served(); n != 0 {
		t.Errorf("canary at 100%%: %d of 200 requests without a UserID reached it, want 0", n)
	}
	if err := c.Reconfigure(promoted); err != nil {
		t.Fatal(err)
	}
	if n := served(); n < 100 {
		t.Errorf("promoted: %d of 200 requests reached the better engine, want most", n)
	}
	if err := c.Reconfigure(canaryConfig(t, vendor, 0)); err != nil {
		t.Fatal(err)
	}
	if n := served(); n != 0 {
		t.Errorf(`"canary": 0: %d of 200 requests reached it, want 0`, n)
	}
}
