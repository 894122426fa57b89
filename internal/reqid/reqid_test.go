package reqid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPutHexIsHex: PutHex writes a word as hex.Encode of its big-endian bytes does.
func TestPutHexIsHex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []uint64{0, math.MaxUint64, 0x0123456789abcdef, 0xfedcba9876543210, 0x0a0b0c0d0e0f0900}
	for range 1000 {
		words = append(words, r.Uint64())
	}
	for _, x := range words {
		var got [16]byte
		PutHex(got[:], x)
		if diff := cmp.Diff(fmt.Sprintf("%016x", x), string(got[:])); diff != "" {
			t.Fatalf("PutHex(%#x) (-want +got):\n%s", x, diff)
		}
	}
}

// TestOr: a given id is kept and buf left alone; an empty one gets 32 hex digits in buf,
// and two new ids differ.
func TestOr(t *testing.T) {
	tests := []struct {
		name, id string
		keep     bool
	}{
		{"given", "req-1", true},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf [32]byte
			got := Or(tt.id, &buf)
			if tt.keep {
				if diff := cmp.Diff(tt.id, got); diff != "" || buf != [32]byte{} {
					t.Fatalf("Or(%q) = %q, buf %q; want the id and buf untouched", tt.id, got, buf[:])
				}
				return
			}
			if len(got) != 32 || got != string(buf[:]) {
				t.Fatalf("Or(%q) = %q, want 32 digits written in buf (%q)", tt.id, got, buf[:])
			}
			for _, c := range []byte(got) {
				if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
					t.Fatalf("Or(%q) = %q: %q is no lowercase hex digit", tt.id, got, c)
				}
			}
			halves := map[string]bool{}
			for range 64 { // either half of a new id is random
				var other [32]byte
				id := Or("", &other)
				halves[id[:16]], halves[id[16:]] = true, true
			}
			if len(halves) != 128 {
				t.Fatalf("64 new ids have %d distinct halves, want 128", len(halves))
			}
		})
	}
}
