package quota

import "testing"

// TestTokensEarnAndSpend: shares add up to whole tokens, the bucket keeps at most most,
// and an empty bucket refuses.
func TestTokensEarnAndSpend(t *testing.T) {
	var b Tokens
	if b.Spend() {
		t.Fatal("an empty bucket gave a token")
	}
	for range 20 {
		b.Earn(0.05, 10)
	}
	if !b.Spend() || b.Spend() {
		t.Fatal("20 shares of 0.05 are not exactly one token")
	}
	for range 100 {
		b.Earn(1, 3)
	}
	n := 0
	for b.Spend() {
		n++
	}
	if n != 3 {
		t.Errorf("spent %d tokens after a long quiet period, want the cap of 3", n)
	}
}
