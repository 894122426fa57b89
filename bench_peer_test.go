package translate_test

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/fanyi-go/translate"
)

// BenchmarkPeerFailsafe is what a service builds by hand without this library: a
// failsafe-go executor (retry 3 attempts, a circuit breaker and a 5 s timeout, failsafe-go
// being the library our breakers come from) around the same no-op engine BenchmarkMiss
// calls. It is a peer line for the miss: no routing, no cache, no quota, no budget, one
// engine.
func BenchmarkPeerFailsafe(b *testing.B) {
	e := floorEngine
	r := &translate.EngineRequest{Texts: []string{"hello"}}
	rp := retrypolicy.NewBuilder[*translate.EngineResult]().WithMaxAttempts(3).Build()
	cb := circuitbreaker.NewBuilder[*translate.EngineResult]().WithFailureThreshold(5).Build()
	to := timeout.New[*translate.EngineResult](5 * time.Second)
	ex := failsafe.With[*translate.EngineResult](rp, cb, to)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, err := ex.WithContext(ctx).GetWithExecution(func(exec failsafe.Execution[*translate.EngineResult]) (*translate.EngineResult, error) {
			return e.Translate(exec.Context(), r)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
