package quota

import "strings"

// MaxTenantBytes bounds a tenant's name.
const MaxTenantBytes = 64

// TenantRule says what a tenant name is, for errors: "tenant name " + TenantRule.
const TenantRule = "must be 1..64 ASCII letters, digits and - _ . : @ /"

// tenantChars are the characters a tenant name may hold besides ASCII letters and digits
// (all ASCII: no byte of a multi-byte character is one of them).
const tenantChars = "-_.:@/"

// ValidTenant reports whether name is a tenant name: "" (the default tenant), or 1..64
// ASCII letters, digits and - _ . : @ /. It allocates nothing.
func ValidTenant(name string) bool {
	if len(name) > MaxTenantBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch ch := name[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case strings.IndexByte(tenantChars, ch) >= 0:
		default:
			return false
		}
	}
	return true
}
