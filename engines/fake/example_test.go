package fake_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/engines/fake"
	"golang.org/x/text/language"
)

// A test scripts the next calls of an engine: a rate-limited failure, a success with bad
// output, then the default behaviour.
func Example() {
	e := fake.New("primary", fake.WithQuota(1000))
	e.Script(fake.RateLimited(2*time.Second), fake.Bad(fake.BadEcho))

	req := &translate.EngineRequest{Texts: []string{"Hello, {name}!"}, Target: language.Spanish}
	for range 3 {
		res, err := e.Translate(context.Background(), req)
		var terr *translate.Error
		if errors.As(err, &terr) {
			fmt.Println(terr.Kind, terr.StatusCode, terr.RetryAfter)
			continue
		}
		fmt.Printf("%q from %v\n", res.Texts[0], res.Source)
	}
	fmt.Println(e.Calls(), "calls,", e.QuotaLeft(), "characters left")
	// Output:
	// rate_limited 429 2s
	// "Hello, {name}!" from en
	// "[es] Hello, {name}!" from en
	// 3 calls, 972 characters left
}

// An engine that is down until the test brings it back up.
func ExampleEngine_Down() {
	e := fake.New("")
	e.Down(translate.KindUnavailable)
	_, err := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"hi"}, Target: language.French})
	fmt.Println(errors.Is(err, translate.ErrUnavailable), err)

	e.Up()
	res, _ := e.Translate(context.Background(), &translate.EngineRequest{Texts: []string{"hi"}, Target: language.French})
	fmt.Println(res.Texts)
	// Output:
	// true translate: fake: unavailable (HTTP 503): fake: scripted unavailable
	// [[fr] hi]
}
