package enginetest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fanyi-go/translate"
	"github.com/google/go-cmp/cmp"
)

// fuzzModeEnv selects the fault of fuzzEngine in FuzzVendorSelf; FuzzVendorSelf runs only in
// the child processes of TestFuzzVendorCatches, which set it.
const fuzzModeEnv = "ENGINETEST_FUZZ_MODE"

// fuzzEngine is an adapter with one fault, chosen by mode, for testing FuzzVendor's checks.
// It posts the texts to the fuzzed vendor and answers from what comes back.
type fuzzEngine struct {
	hc   *http.Client
	mode string
}

func (e *fuzzEngine) Name() string { return "fuzzed" }

func (e *fuzzEngine) Translate(ctx context.Context, req *translate.EngineRequest) (*translate.EngineResult, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://vendor.invalid/t", strings.NewReader(strings.Join(req.Texts, "\n")))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Authorization", "Bearer "+CanaryKey)
	resp, err := e.hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	ok := &translate.EngineResult{Texts: make([]string, len(req.Texts))}
	switch e.mode {
	case "echo": // quotes the vendor's answer in its errors
		return nil, &translate.Error{Kind: translate.KindUnavailable, Engine: e.Name(), Message: string(body)}
	case "short":
		return &translate.EngineResult{Texts: []string{"one"}}, nil
	case "plain":
		return nil, errors.New("not a *translate.Error")
	case "name":
		return nil, &translate.Error{Kind: translate.KindUnavailable, Engine: "other"}
	case "retry":
		return nil, &translate.Error{Kind: translate.KindRateLimited, Engine: e.Name(), RetryAfter: 6 * time.Minute}
	case "limits":
		ok.Limits = &translate.VendorLimits{RemainingRequests: -1, RemainingTokens: -1, ResetRequests: -time.Second}
	}
	return ok, nil
}

// FuzzVendorSelf runs FuzzVendor's seeds over fuzzEngine, in a child process only.
func FuzzVendorSelf(f *testing.F) {
	mode := os.Getenv(fuzzModeEnv)
	if mode == "" {
		f.Skip("run by TestFuzzVendorCatches")
	}
	FuzzVendor(f, FuzzHarness{NewEngine: func(hc *http.Client, key string) (translate.Engine, error) {
		return &fuzzEngine{hc: hc, mode: mode}, nil
	}}, `{"ok":true}`)
}

// TestFuzzVendorCatches runs FuzzVendor's seeds over adapters with one fault each, in child
// processes, and checks which fail and with what message.
func TestFuzzVendorCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	want := map[string]string{
		"ok":     "",
		"echo":   "leaks",
		"short":  "for 2 texts",
		"plain":  "want a *translate.Error of engine",
		"name":   "want a *translate.Error of engine",
		"retry":  "RetryAfter 6m0s outside [0, 5m]",
		"limits": "Limits &{",
	}
	got := map[string]string{}
	for mode, msg := range want {
		cmd := exec.Command(os.Args[0], "-test.run=^FuzzVendorSelf$", "-test.count=1")
		cmd.Env = append(os.Environ(), fuzzModeEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		switch {
		case err == nil:
			got[mode] = ""
		case msg != "" && strings.Contains(string(out), msg):
			got[mode] = msg
		default:
			got[mode] = "unexpected: " + string(out)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FuzzVendor over faulty adapters (-want +got):\n%s", diff)
	}
}
