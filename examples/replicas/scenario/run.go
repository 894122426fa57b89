package scenario

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fanyi-go/translate"
	"github.com/fanyi-go/translate/redisstore"
)

// Pauser pauses and resumes Redis: SIGSTOP and SIGCONT for a server the scenario started.
type Pauser interface {
	Pause() error
	Resume() error
}

// Report is what a run found.
type Report struct {
	Config         Config
	Seconds        map[int]map[int]Second // second -> replica -> figures
	EngineSpend    float64                // credits the paid engine's calls cost, from its records
	QuotaChars     int64                  // characters the quota engine was sent
	PaidCalls      int                    // calls the paid engine received
	QuotaCalls     int                    // calls the quota engine received
	UnservedPaid   int                    // requests pinned to the paid engine not served, over all replicas
	UnservedQuota  int                    // requests pinned to the quota engine not served
	StoreSpent     float64                // the store's figure after every lease ended
	InFlightAtKill float64                // credits leased in Redis right after the kill
	// Duplicates are engine/request id sent twice, whoever admitted the sends: the store
	// promises none, the replicas using redisstore.WithStrictRequestIDs.
	Duplicates []string
	// OutageDuplicates are those of Duplicates where a send was admitted from a replica's
	// local share.
	OutageDuplicates []string
	// RefusedIDs are the admissions refused while Redis was away because their request id
	// may have reached an engine through another replica: what the outage cost.
	RefusedIDs  int
	PausedFrom  time.Time
	PausedUntil time.Time
}

// Verdict is one check of a run.
type Verdict struct {
	Name   string
	OK     bool
	Detail string
}

// Run starts cfg.Replicas copies of exe (with args, EnvReplica and EnvConfig set), kills the
// last one at cfg.KillAt, pauses Redis for cfg.PauseFor at cfg.PauseAt and reads what the
// engines saw. stderr of the replicas goes to logs.
func Run(ctx context.Context, cfg Config, exe string, args []string, redisPause Pauser, logs io.Writer) (*Report, error) {
	rep := &Report{Config: cfg, Seconds: map[int]map[int]Second{}}
	logs = &lockedWriter{w: logs}
	rdb, err := NewRedis(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	body, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var readers sync.WaitGroup
	cmds := make([]*exec.Cmd, cfg.Replicas)
	for i := range cmds {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), EnvReplica+"="+strconv.Itoa(i), EnvConfig+"="+string(body))
		cmd.Stderr = logs
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		cmds[i] = cmd
		readers.Go(func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var s Second
				if json.Unmarshal(sc.Bytes(), &s) != nil {
					continue
				}
				mu.Lock()
				if rep.Seconds[s.Second] == nil {
					rep.Seconds[s.Second] = map[int]Second{}
				}
				rep.Seconds[s.Second][s.Replica] = s
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	waitUntil(ctx, start.Add(cfg.KillAt))
	_ = cmds[cfg.Replicas-1].Process.Signal(syscall.SIGKILL)
	rep.InFlightAtKill = leased(ctx, rdb, cfg.Prefix)
	waitUntil(ctx, start.Add(cfg.PauseAt))
	rep.PausedFrom = time.Now()
	if err := redisPause.Pause(); err != nil {
		return nil, fmt.Errorf("pause redis: %w", err)
	}
	waitUntil(ctx, rep.PausedFrom.Add(cfg.PauseFor))
	if err := redisPause.Resume(); err != nil {
		return nil, fmt.Errorf("resume redis: %w", err)
	}
	rep.PausedUntil = time.Now()
	readers.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil && i != cfg.Replicas-1 {
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
	}
	for _, reps := range rep.Seconds {
		for _, s := range reps {
			rep.UnservedPaid += s.UnservedPaid
			rep.UnservedQuota += s.UnservedQuota
			rep.RefusedIDs += s.RefusedIDs
		}
	}
	if err := rep.readRecords(); err != nil {
		return nil, err
	}
	rep.StoreSpent, err = storeFigure(ctx, rdb, cfg)
	return rep, err
}

func waitUntil(ctx context.Context, t time.Time) {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// leased sums the credits of the leases live in Redis.
func leased(ctx context.Context, rdb *redis.Client, prefix string) float64 {
	toks, _ := rdb.ZRange(ctx, prefix+"lx", 0, -1).Result()
	sum := 0.0
	for _, t := range toks {
		var l struct {
			C string `json:"c"`
		}
		if json.Unmarshal([]byte(t), &l) == nil {
			f, _ := strconv.ParseFloat(l.C, 64)
			sum += f
		}
	}
	return sum
}

// storeFigure is the store's spend once every lease has ended: admissions dated a minute
// later sweep the leases of dead holders.
func storeFigure(ctx context.Context, rdb *redis.Client, cfg Config) (float64, error) {
	st, err := redisstore.New(rdb, redisstore.WithPrefix(cfg.Prefix), redisstore.WithTimeout(5*time.Second))
	if err != nil {
		return 0, err
	}
	later := cfg.Now.Add(time.Minute)
	for range 100 {
		if _, err := st.Admit(ctx, translate.Admission{Now: later, Engine: "sweep"}); err != nil {
			return 0, err
		}
		n, err := rdb.ZCount(ctx, cfg.Prefix+"lx", "-inf", strconv.FormatInt(later.UnixMilli(), 10)).Result()
		if err != nil {
			return 0, err
		}
		if n <= 1 { // the sweep's own lease
			break
		}
	}
	b, err := st.Budget(ctx, cfg.Now, cfg.Daily)
	return b.Spent, err
}

func (rep *Report) readRecords() error {
	cfg := rep.Config
	seen := map[string]bool{} // engine/request id -> sent, admitted from a local share
	for _, engine := range []string{PaidEngine, QuotaEngine} {
		for i := range cfg.Replicas {
			data, err := os.ReadFile(RecordFile(cfg.Dir, engine, i))
			if err != nil && !os.IsNotExist(err) {
				return err
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				f := strings.Split(line, "\t")
				if len(f) != 4 {
					continue
				}
				n, _ := strconv.ParseInt(f[1], 10, 64)
				if engine == PaidEngine {
					rep.EngineSpend += float64(n) * cfg.CostPerMillion / 1e6
					rep.PaidCalls++
				} else {
					rep.QuotaChars += n
					rep.QuotaCalls++
				}
				local := f[3] == "1"
				key := engine + "/" + f[0]
				if prevLocal, dup := seen[key]; dup {
					rep.Duplicates = append(rep.Duplicates, key)
					if prevLocal || local {
						rep.OutageDuplicates = append(rep.OutageDuplicates, key)
					}
				}
				seen[key] = seen[key] || local
			}
		}
	}
	sort.Strings(rep.Duplicates)
	sort.Strings(rep.OutageDuplicates)
	return nil
}

// Verdicts checks the run against the scenario's promises. The first one says whether the
// others mean anything: demand must have been refused for the budget and for the quota.
func (rep *Report) Verdicts() []Verdict {
	cfg := rep.Config
	const eps = 1e-9
	diff := rep.StoreSpent - rep.EngineSpend
	quotaUsed := float64(rep.QuotaChars) / float64(max(cfg.Quota, 1))
	return []Verdict{
		{"demand exceeded the budget and the quota", rep.UnservedPaid > 0 && rep.UnservedQuota > 0,
			fmt.Sprintf("not served: %d requests pinned to the paid engine, %d to the quota engine; engines got %d paid and %d quota calls",
				rep.UnservedPaid, rep.UnservedQuota, rep.PaidCalls, rep.QuotaCalls)},
		{"engines' spend within the budget", rep.EngineSpend <= cfg.Daily+eps,
			fmt.Sprintf("%.4f of %.4f credits", rep.EngineSpend, cfg.Daily)},
		{"quota engine within its quota", rep.QuotaChars <= cfg.Quota,
			fmt.Sprintf("%d of %d characters", rep.QuotaChars, cfg.Quota)},
		{"budget at least 95% used (no phantom spend)", rep.EngineSpend >= 0.95*cfg.Daily-eps,
			fmt.Sprintf("%.1f%%", 100*rep.EngineSpend/cfg.Daily)},
		{"quota at least 95% used (no phantom spend)", quotaUsed >= 0.95,
			fmt.Sprintf("%.1f%%", 100*quotaUsed)},
		{"leases in flight at the kill (their expiry is checked)", rep.InFlightAtKill > 0,
			fmt.Sprintf("%.4f credits leased in Redis right after the kill", rep.InFlightAtKill)},
		{"store minus engines within what was in flight at the kill", diff <= rep.InFlightAtKill+eps && diff >= -eps,
			fmt.Sprintf("store %.4f - engines %.4f = %.4f; in flight %.4f", rep.StoreSpent, rep.EngineSpend, diff, rep.InFlightAtKill)},
		{"no request id reached an engine twice", len(rep.Duplicates) == 0,
			fmt.Sprintf("%d duplicates %v (%d with an admission from a local share); the outage cost %d admissions refused for a request id another replica may have sent",
				len(rep.Duplicates), first(rep.Duplicates, 5), len(rep.OutageDuplicates), rep.RefusedIDs)},
	}
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// Table writes the per-second figures: requests served, refused and failed per replica, and
// the budget each saw spent ("*" while it served from its local share).
func (rep *Report) Table(w io.Writer) {
	secs := make([]int, 0, len(rep.Seconds))
	for s := range rep.Seconds {
		secs = append(secs, s)
	}
	sort.Ints(secs)
	fmt.Fprintf(w, "%4s", "sec")
	for i := range rep.Config.Replicas {
		fmt.Fprintf(w, " | %-24s", fmt.Sprintf("replica %d ok/ref/fail spent", i))
	}
	fmt.Fprintln(w)
	for _, s := range secs {
		fmt.Fprintf(w, "%4d", s)
		for i := range rep.Config.Replicas {
			r, ok := rep.Seconds[s][i]
			if !ok {
				fmt.Fprintf(w, " | %-24s", "-")
				continue
			}
			mark := " "
			if r.Degraded {
				mark = "*"
			}
			fmt.Fprintf(w, " | %-24s", fmt.Sprintf("%3d/%3d/%2d %.4f%s", r.OK, r.Refused, r.Failed, r.Spent, mark))
		}
		fmt.Fprintln(w)
	}
}

// OK reports whether every verdict holds.
func OK(vs []Verdict) bool {
	for _, v := range vs {
		if !v.OK {
			return false
		}
	}
	return true
}

// lockedWriter lets several replicas write their stderr to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
