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
	StoreSpent     float64                // the store's figure after every live replica returned its blocks
	InFlightAtKill float64                // credits held in blocks in Redis right after the kill
	// DeadBlock is what is still reserved once every live replica returned its blocks: the
	// killed replica's block, which Redis charges as spent BlockTTL after its last renewal.
	DeadBlock float64
	// StoreQuota and DeadQuota are the same for the quota engine's characters.
	StoreQuota, DeadQuota float64
	// BlockCalls is the EVALSHA calls Redis received during the run (block refills and
	// returns, request ids, holds); Requests the requests the replicas made.
	BlockCalls int64
	Requests   int
	// RedisCommands is every command Redis received during the run, from INFO commandstats
	// (INFO and CONFIG RESETSTAT aside).
	RedisCommands int64
	RedisByName   map[string]int64 // the same per command
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
	// FlushedAt is when Redis was FLUSHALLed; BeforeFlush the blocks reserved in Redis just
	// before it (zero without FlushAt).
	FlushedAt   time.Time
	BeforeFlush float64
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
	_ = rdb.ConfigResetStat(ctx).Err()
	body, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var readers sync.WaitGroup
	cmds, err := rep.start(ctx, exe, args, body, logs, &readers)
	if err != nil {
		return nil, err
	}
	if err := rep.events(ctx, rdb, cmds, redisPause); err != nil {
		return nil, err
	}
	readers.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil && (cfg.KillAt == 0 || i != cfg.Replicas-1) {
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
	}
	for _, reps := range rep.Seconds {
		for _, s := range reps {
			rep.UnservedPaid += s.UnservedPaid
			rep.UnservedQuota += s.UnservedQuota
			rep.RefusedIDs += s.RefusedIDs
			rep.Requests += s.OK + s.Refused + s.Failed
		}
	}
	rep.BlockCalls, rep.RedisCommands, rep.RedisByName = evalshaCalls(ctx, rdb)
	if err := rep.readRecords(); err != nil {
		return nil, err
	}
	rep.StoreSpent, rep.DeadBlock, err = storeFigure(ctx, rdb, cfg)
	rep.StoreQuota, rep.DeadQuota = quotaFigure(ctx, rdb, cfg)
	return rep, err
}

// start starts cfg.Replicas copies of exe and reads each one's seconds into rep.Seconds
// with a reader of its own, counted in readers.
func (rep *Report) start(ctx context.Context, exe string, args []string, body []byte, logs io.Writer, readers *sync.WaitGroup) ([]*exec.Cmd, error) {
	var mu sync.Mutex
	cmds := make([]*exec.Cmd, rep.Config.Replicas)
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
	return cmds, nil
}

// events kills the last replica at KillAt, FLUSHALLs Redis at FlushAt and pauses it at
// PauseAt for PauseFor, in the order of their times; a zero time or duration skips one.
func (rep *Report) events(ctx context.Context, rdb *redis.Client, cmds []*exec.Cmd, redisPause Pauser) error {
	cfg := rep.Config
	start := time.Now()
	if cfg.FlushAt > 0 && (cfg.KillAt == 0 || cfg.FlushAt < cfg.KillAt) {
		waitUntil(ctx, start.Add(cfg.FlushAt))
		rep.FlushedAt = time.Now()
		rep.BeforeFlush, _ = figures(ctx, rdb, cfg)
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			return fmt.Errorf("flushall: %w", err)
		}
	}
	if cfg.KillAt > 0 {
		waitUntil(ctx, start.Add(cfg.KillAt))
		_ = cmds[cfg.Replicas-1].Process.Signal(syscall.SIGKILL)
		rep.InFlightAtKill, _ = figures(ctx, rdb, cfg)
	}
	if cfg.PauseFor <= 0 {
		return nil
	}
	waitUntil(ctx, start.Add(cfg.PauseAt))
	rep.PausedFrom = time.Now()
	if err := redisPause.Pause(); err != nil {
		return fmt.Errorf("pause redis: %w", err)
	}
	waitUntil(ctx, rep.PausedFrom.Add(cfg.PauseFor))
	if err := redisPause.Resume(); err != nil {
		return fmt.Errorf("resume redis: %w", err)
	}
	rep.PausedUntil = time.Now()
	return nil
}

func waitUntil(ctx context.Context, t time.Time) {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// figures reads the day's budget in Redis: reserved (in blocks) and spent.
func figures(ctx context.Context, rdb *redis.Client, cfg Config) (reserved, spent float64) {
	day := cfg.Now.UTC().Format(time.DateOnly)
	v, _ := rdb.HMGet(ctx, cfg.Prefix+"b:"+day, "r", "s").Result()
	if len(v) == 2 {
		reserved, spent = parse(v[0]), parse(v[1])
	}
	return reserved, spent
}

// quotaFigure is the quota engine's figure (spent and reserved) and what its blocks still
// reserve, once every live replica returned them.
func quotaFigure(ctx context.Context, rdb *redis.Client, cfg Config) (total, reserved float64) {
	ks, _ := rdb.Keys(ctx, cfg.Prefix+"q:"+QuotaEngine+":*").Result()
	for _, k := range ks {
		v, _ := rdb.HMGet(ctx, k, "r", "s").Result()
		if len(v) == 2 {
			reserved += parse(v[0])
			total += parse(v[0]) + parse(v[1])
		}
	}
	return total, reserved
}

func parse(v any) float64 {
	s, _ := v.(string)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// evalshaCalls is the EVALSHA calls in INFO commandstats, and the calls of every command
// but INFO and CONFIG RESETSTAT.
func evalshaCalls(ctx context.Context, rdb *redis.Client) (evalsha, all int64, byName map[string]int64) {
	byName = map[string]int64{}
	info, _ := rdb.Info(ctx, "commandstats").Result()
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" || name == "cmdstat_config|resetstat" {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		all += n
		byName[strings.TrimPrefix(name, "cmdstat_")] = n
		if name == "cmdstat_evalsha" {
			evalsha = n
		}
	}
	return evalsha, all, byName
}

// storeFigure is the store's spend once every live replica returned its blocks: what
// Redis counts as spent, and the killed replica's block, which it will charge in full.
func storeFigure(ctx context.Context, rdb *redis.Client, cfg Config) (spent, dead float64, err error) {
	dead, spent = figures(ctx, rdb, cfg)
	return spent + dead, dead, nil
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
	switch {
	case cfg.FlushAt > 0:
		return rep.flushVerdicts()
	case cfg.SpendAll:
		return rep.spendVerdicts()
	}
	const eps = 1e-9
	diff := rep.StoreSpent - rep.EngineSpend
	quotaUsed := float64(rep.QuotaChars) / float64(max(cfg.Quota, 1))
	qStranded := max(rep.StoreQuota-float64(rep.QuotaChars), 0)
	return []Verdict{
		{"demand exceeded the budget and the quota", rep.UnservedPaid > 0 && rep.UnservedQuota > 0,
			fmt.Sprintf("not served: %d requests pinned to the paid engine, %d to the quota engine; engines got %d paid and %d quota calls",
				rep.UnservedPaid, rep.UnservedQuota, rep.PaidCalls, rep.QuotaCalls)},
		{"engines' spend within the budget", rep.EngineSpend <= cfg.Daily+eps,
			fmt.Sprintf("%.4f of %.4f credits", rep.EngineSpend, cfg.Daily)},
		{"quota engine within its quota", rep.QuotaChars <= cfg.Quota,
			fmt.Sprintf("%d of %d characters", rep.QuotaChars, cfg.Quota)},
		{"budget at least 95% used but for what the killed replica's block stranded (no phantom spend)", rep.EngineSpend >= 0.95*(cfg.Daily-diff)-eps,
			fmt.Sprintf("%.1f%% sent to the engines, %.1f%% stranded in the killed replica's block",
				100*rep.EngineSpend/cfg.Daily, 100*diff/cfg.Daily)},
		{"quota at least 95% used but for what the killed replica's block stranded", float64(rep.QuotaChars) >= 0.95*(float64(cfg.Quota)-qStranded),
			fmt.Sprintf("%.1f%% sent, %.1f%% stranded in the killed replica's block", 100*quotaUsed, 100*qStranded/float64(max(cfg.Quota, 1)))},
		{"blocks held at the kill (the killed replica's is charged)", rep.InFlightAtKill > 0,
			fmt.Sprintf("%.4f credits in blocks in Redis right after the kill", rep.InFlightAtKill)},
		{"store minus engines within the killed replica's block", diff <= rep.DeadBlock+eps && diff >= -eps,
			fmt.Sprintf("store %.4f - engines %.4f = %.4f; killed replica's block %.4f", rep.StoreSpent, rep.EngineSpend, diff, rep.DeadBlock)},
		rep.opsVerdict(),
		{"no request id reached an engine twice", len(rep.Duplicates) == 0,
			fmt.Sprintf("%d duplicates %v (%d with an admission from a local share); the outage cost %d admissions refused for a request id another replica may have sent",
				len(rep.Duplicates), first(rep.Duplicates, 5), len(rep.OutageDuplicates), rep.RefusedIDs)},
	}
}

// flushVerdicts checks a run where Redis lost its data: the engines are never sent more
// than the budget, no request id twice; it reports what the loss stranded.
func (rep *Report) flushVerdicts() []Verdict {
	cfg := rep.Config
	const eps = 1e-9
	return []Verdict{
		{"demand exceeded the budget", rep.UnservedPaid > 0,
			fmt.Sprintf("not served: %d requests; the paid engine got %d calls", rep.UnservedPaid, rep.PaidCalls)},
		{"engines' spend within the budget after FLUSHALL (overrun 0)", rep.EngineSpend <= cfg.Daily+eps,
			fmt.Sprintf("%.4f of %.4f credits (%.1f%%); %.1f%% stranded: the blocks held at the loss serve on, no new block is granted from the lost day (%.4f credits were in blocks just before FLUSHALL)",
				rep.EngineSpend, cfg.Daily, 100*rep.EngineSpend/cfg.Daily, 100*(cfg.Daily-rep.EngineSpend)/cfg.Daily, rep.BeforeFlush)},
		rep.opsVerdict(),
		{"no request id reached an engine twice", len(rep.Duplicates) == 0,
			fmt.Sprintf("%d duplicates %v", len(rep.Duplicates), first(rep.Duplicates, 5))},
	}
}

// spendVerdicts checks a run that spends the whole budget: the engines got at least 99.9%
// of it and never more, at most 0.1% is stranded (not sent to an engine, or still reserved
// in a block once every replica returned its blocks), no request id twice.
func (rep *Report) spendVerdicts() []Verdict {
	cfg := rep.Config
	const eps = 1e-9
	stranded := max(cfg.Daily-rep.EngineSpend, 0)
	return []Verdict{
		{"demand exceeded the budget", rep.UnservedPaid > 0,
			fmt.Sprintf("not served: %d requests; the paid engine got %d calls", rep.UnservedPaid, rep.PaidCalls)},
		{"engines' spend within the budget", rep.EngineSpend <= cfg.Daily+eps,
			fmt.Sprintf("%.4f of %.4f credits", rep.EngineSpend, cfg.Daily)},
		{"at least 99.9% of the budget spent", rep.EngineSpend >= 0.999*cfg.Daily-eps,
			fmt.Sprintf("%.3f%% sent to the engines (%d calls)", 100*rep.EngineSpend/cfg.Daily, rep.PaidCalls)},
		{"at most 0.1% stranded at the end", stranded <= 0.001*cfg.Daily+eps && rep.DeadBlock <= 0.001*cfg.Daily+eps,
			fmt.Sprintf("%.3f%% of the budget not sent to an engine; %.3f%% still reserved in blocks after every replica returned its own",
				100*stranded/cfg.Daily, 100*rep.DeadBlock/cfg.Daily)},
		rep.opsVerdict(),
		{"no request id reached an engine twice", len(rep.Duplicates) == 0,
			fmt.Sprintf("%d duplicates %v", len(rep.Duplicates), first(rep.Duplicates, 5))},
	}
}

// clientCommands are the commands the replicas send themselves; INFO commandstats also
// counts the commands the store's scripts run inside Redis (HSET, PEXPIRE, TIME...).
var clientCommands = []string{"evalsha", "eval", "script|load", "get", "hmget", "set", "hello", "client|setinfo"}

// opsVerdict is the block figures: Redis round trips per request. Every request here
// carries a request id, which costs a claim before its engine call and an answer after it
// (two EVALSHA on the id's own key); the budget and the quota cost only the refills of
// leased blocks on top, a few per replica per second whatever the load.
func (rep *Report) opsVerdict() Verdict {
	n := float64(max(rep.Requests, 1))
	calls := float64(rep.PaidCalls + rep.QuotaCalls)
	var sent int64
	for _, c := range clientCommands {
		sent += rep.RedisByName[c]
	}
	beyond := max(float64(sent)-2*calls, 0) // at most: a request id refused before its call costs a claim too
	return Verdict{"Redis round trips per request at most 3 (a request id's claim and answer per engine call; the blocks' refills)",
		float64(sent) <= 3*n,
		fmt.Sprintf("%.2f commands sent per request (%d for %d requests, %.0f engine calls; %.2e per request beyond the ids' two per call: block refills and returns, holds, Budget); inside the scripts Redis ran %d more (all, from INFO commandstats: %v)",
			float64(sent)/n, sent, rep.Requests, calls, beyond/n, rep.RedisCommands-sent, rep.RedisByName)}
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
