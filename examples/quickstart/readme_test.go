package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEUsage runs the README's usage program as copied, with no vendor keys: it must
// compile, translate on the simulated engine and exit 0.
func TestREADMEUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the README's program")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Usage\n.*?```go\n(package main\n.*?)```\n").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README's Usage section has no complete program (a go block starting with package main)")
	}
	// A directory whose name starts with "_" is inside the module, so the program builds
	// against this checkout, and ./... patterns leave it out.
	dir, err := os.MkdirTemp(".", "_readme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./"+filepath.Base(dir))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GOFLAGS=" + os.Getenv("GOFLAGS"),
		"GOCACHE=" + os.Getenv("GOCACHE"), "GOMODCACHE=" + os.Getenv("GOMODCACHE"), "GOPATH=" + os.Getenv("GOPATH"),
		"GOTOOLCHAIN=" + os.Getenv("GOTOOLCHAIN")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README's program: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "[zh-TW] The house is red. simulated ") {
		t.Errorf("the README's program printed %q", out)
	}
}
