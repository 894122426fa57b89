package translate_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
)

// A Client over two engines: the preferred one is down, so the request fails over.
func Example() {
	primary := fake.New("primary")
	backup := fake.New("backup")
	primary.Down(translate.KindUnavailable)

	c, err := translate.New(
		translate.WithEngine(primary, translate.Profile{Quality: 95}),
		translate.WithEngine(backup, translate.Profile{Quality: 60}),
		translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5}), // always prefer the best score
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),         // no retry on the same engine
	)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	res, err := c.Translate(context.Background(), translate.Request{Text: "Hello", Source: "en", Target: "es"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text, "from", res.Engine)
	for _, a := range res.Attempts {
		fmt.Println(" attempt:", a.Engine, translate.KindOf(a.Err) == translate.KindUnavailable)
	}
	// Output:
	// [es] Hello from backup
	//  attempt: primary true
	//  attempt: backup false
}

// Errors are matched by Kind, never by string.
func Example_errors() {
	c, err := translate.New(translate.WithEngine(fake.New("only"), translate.Profile{}))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	_, err = c.Translate(context.Background(), translate.Request{Text: "Hello"}) // no Target
	fmt.Println(errors.Is(err, translate.ErrInvalidInput), translate.KindOf(err))
	// Output: true invalid_input
}

// The second identical request is answered from the cache.
func Example_caching() {
	e := fake.New("engine")
	c, err := translate.New(translate.WithEngine(e, translate.Profile{CostPerMillion: 20}))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	req := translate.Request{Text: "Good morning", Source: "en", Target: "fr"}
	for i := 0; i < 2; i++ {
		res, err := c.Translate(context.Background(), req)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s cache=%v cost=%.6f\n", res.Text, res.FromCache, res.Cost)
	}
	fmt.Println("engine calls:", e.Calls())
	// Output:
	// [fr] Good morning cache=false cost=0.000240
	// [fr] Good morning cache=true cost=0.000000
	// engine calls: 1
}

// Engines shows each engine's standing. Before any traffic an engine scores quality*0.40 +
// 100*0.25 (availability) + 76.14*0.20 (speed at the assumed 300ms) + cost*0.15: here
// 36+25+15.23+15 and 28+25+15.23+15 (both cost nothing, so cost scores 100).
func Example_routing() {
	c, err := translate.New(
		translate.WithEngine(fake.New("a"), translate.Profile{Quality: 90}),
		translate.WithEngine(fake.New("b"), translate.Profile{Quality: 70, Class: translate.ClassFree}),
		translate.WithSeed(1),
	)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, st := range c.Engines() {
		fmt.Printf("%s breaker=%s pool=%s health=%.0f score=%.2f\n", st.Name, st.Breaker, st.Pool, st.Health, st.Score)
	}
	// Output:
	// a breaker=closed pool=normal health=1 score=91.23
	// b breaker=closed pool=normal health=1 score=83.23
}

// Failures are observable: a failing engine's breaker opens and its traffic moves.
func Example_observability() {
	flaky := fake.New("flaky")
	flaky.Down(translate.KindUnavailable)
	c, err := translate.New(
		translate.WithEngine(flaky, translate.Profile{Quality: 99}),
		translate.WithEngine(fake.New("steady"), translate.Profile{Quality: 50}),
		translate.WithBreaker(translate.BreakerPolicy{Window: 4, MinCalls: 4}),
		translate.WithRetry(translate.RetryPolicy{PerEngine: 1}),
		translate.WithRouting(translate.RoutingPolicy{Temperature: 0.5}),
		translate.WithoutCache(),
	)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for i := 0; i < 6; i++ {
		if _, err := c.Translate(context.Background(), translate.Request{Text: fmt.Sprint("text ", i), Source: "en", Target: "de"}); err != nil {
			panic(err)
		}
	}
	fmt.Println(c.Engines()[0].Name, c.Engines()[0].Breaker)
	// Output: flaky open
}
