package quota

import (
	"strings"
	"testing"
)

func TestValidTenant(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"", true},
		{"acme", true},
		{"ACME-eu_1.x:y@z/w", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"a b", false},
		{"a\x00", false},
		{"é", false},
		{"a+b", false},
		{"a\\b", false},
		{"\xc0@", false}, // a byte over 0x7f never matches tenantChars
	} {
		if got := ValidTenant(tc.name); got != tc.want {
			t.Errorf("ValidTenant(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestValidTenantAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { ValidTenant("acme-eu") }); n != 0 {
		t.Errorf("ValidTenant allocates %.0f times, want 0", n)
	}
}
