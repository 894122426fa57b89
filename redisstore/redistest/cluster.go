package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cluster is a Redis Cluster, each node a redis-server on a loopback port, started by
// StartCluster (masters only) or StartClusterWithReplicas. Stop ends it.
type Cluster struct {
	Addrs []string
	dir   string
	nodes []*Server
}

// StartCluster starts n (at least 3) redis-server processes with --cluster-enabled yes on
// free loopback ports, persistence off, joins them with redis-cli --cluster create and
// waits until every node reports cluster_state:ok, for at most 30s. It returns ErrMissing
// when redis-server or redis-cli is not installed.
func StartCluster(n int) (*Cluster, error) { return StartClusterWithReplicas(n, 0) }

// StartClusterWithReplicas starts a cluster of masters (at least 3), each with replicas
// replicas (0 to 2): masters*(1+replicas) nodes, joined by redis-cli --cluster create
// --cluster-replicas. It waits until every node reports cluster_state:ok and every replica
// has its master's link up, for at most 30s. A replica is promoted about 3-4s after its
// master dies (cluster-node-timeout 2s, then the election).
func StartClusterWithReplicas(masters, replicas int) (*Cluster, error) {
	if masters < 3 {
		return nil, errors.New("redistest: a cluster needs at least 3 masters")
	}
	if replicas < 0 || replicas > 2 {
		return nil, errors.New("redistest: 0 to 2 replicas per master")
	}
	n := masters * (1 + replicas)
	if _, err := exec.LookPath("redis-cli"); err != nil {
		return nil, ErrMissing
	}
	dir, err := os.MkdirTemp("", "redistest-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	for i := range n {
		s, err := c.startNode(i, 0)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.nodes = append(c.nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	// redis-cli waits for the nodes to join without a limit of its own ("Waiting for the
	// cluster to join..."): bound it, so a cluster that never forms fails the start.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create (at most 60s): %w: %s", err, out)
	}
	if err := c.WaitOK(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.waitLinks(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// startNode starts node i on port (a free one when 0), its cluster config in the
// cluster's directory so that a restarted node rejoins with its slots.
func (c *Cluster) startNode(i, port int) (*Server, error) {
	return start(port, "cluster node", "--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
		"--cluster-require-full-coverage", "no",
		"--cluster-config-file", filepath.Join(c.dir, "nodes-"+strconv.Itoa(i)+".conf"), "--dir", c.dir)
}

// Kill ends the node at addr with SIGKILL: its data is gone.
func (c *Cluster) Kill(addr string) error {
	for _, s := range c.nodes {
		if s.Addr == addr {
			_ = s.cmd.Process.Signal(syscall.SIGKILL)
			<-s.done
			return nil
		}
	}
	return fmt.Errorf("redistest: no node %s", addr)
}

// Restart starts the killed node at addr again, empty, on the same port and with its
// cluster config: it takes its slots back without their data.
func (c *Cluster) Restart(addr string) error {
	for i, s := range c.nodes {
		if s.Addr == addr {
			port, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
			ns, err := c.startNode(i, port)
			if err != nil {
				return err
			}
			c.nodes[i] = ns
			return c.WaitOK(30 * time.Second)
		}
	}
	return fmt.Errorf("redistest: no node %s", addr)
}

// WaitOK waits until every running node (not one killed by Kill) reports
// cluster_state:ok.
func (c *Cluster) WaitOK(limit time.Duration) error {
	return c.waitAll(limit, "cluster_state:ok", "cluster", "info")
}

// waitLinks waits until every running replica reports its master's link up.
func (c *Cluster) waitLinks(limit time.Duration) error {
	return c.waitAll(limit, "", "info", "replication")
}

// waitAll polls redis-cli args on every running node until each output contains want
// (when want is empty: has no "master_link_status:down"), for at most limit.
func (c *Cluster) waitAll(limit time.Duration, want string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		ok := true
		for _, s := range c.nodes {
			if !s.running() {
				continue
			}
			out, err := c.cli(ctx, s.Addr, args...)
			if err != nil || (want != "" && !strings.Contains(out, want)) ||
				(want == "" && strings.Contains(out, "master_link_status:down")) {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: %s: not every node answered as expected within %v", strings.Join(args, " "), limit)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) cli(ctx context.Context, addr string, args ...string) (string, error) {
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", "127.0.0.1", "-p", port}, args...)...).Output()
	return string(out), err
}

// ReplicaOf returns the address of a replica of the master at addr, as that master's
// INFO replication lists it.
func (c *Cluster) ReplicaOf(addr string) (string, error) {
	out, err := c.cli(context.Background(), addr, "info", "replication")
	if err != nil {
		return "", fmt.Errorf("redistest: info replication on %s: %w", addr, err)
	}
	for _, line := range strings.Split(out, "\n") {
		// slave0:ip=127.0.0.1,port=40001,state=online,offset=...,lag=0
		if !strings.HasPrefix(line, "slave") || !strings.Contains(line, "port=") {
			continue
		}
		port := line[strings.Index(line, "port=")+5:]
		if i := strings.IndexByte(port, ','); i >= 0 {
			port = port[:i]
		}
		return "127.0.0.1:" + strings.TrimSpace(port), nil
	}
	return "", fmt.Errorf("redistest: %s has no replica", addr)
}

// WaitMaster waits until the node at addr reports role:master, for at most limit.
func (c *Cluster) WaitMaster(addr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		if out, err := c.cli(ctx, addr, "info", "replication"); err == nil && strings.Contains(out, "role:master") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: %s was not promoted to master within %v", addr, limit)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills every node and removes the cluster's files.
func (c *Cluster) Stop() {
	for _, s := range c.nodes {
		select {
		case <-s.done:
		default:
			s.Stop()
		}
	}
	_ = os.RemoveAll(c.dir)
}

// running reports whether the server's process has not exited.
func (s *Server) running() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}
