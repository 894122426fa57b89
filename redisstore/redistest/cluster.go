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

// Cluster is a Redis Cluster of masters without replicas, each a redis-server on a
// loopback port, started by StartCluster. Stop ends it.
type Cluster struct {
	Addrs []string
	dir   string
	nodes []*Server
}

// StartCluster starts n (at least 3) redis-server processes with --cluster-enabled yes on
// free loopback ports, persistence off, joins them with redis-cli --cluster create and
// waits until every node reports cluster_state:ok, for at most 30s. It returns ErrMissing
// when redis-server or redis-cli is not installed.
func StartCluster(n int) (*Cluster, error) {
	if n < 3 {
		return nil, errors.New("redistest: a cluster needs at least 3 masters")
	}
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
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
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

// WaitOK waits until every node reports cluster_state:ok.
func (c *Cluster) WaitOK(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		ok := true
		for _, a := range c.Addrs {
			out, err := exec.CommandContext(ctx, "redis-cli", "-h", "127.0.0.1", "-p", a[strings.LastIndexByte(a, ':')+1:], "cluster", "info").Output()
			if err != nil || !strings.Contains(string(out), "cluster_state:ok") {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("redistest: the cluster did not reach cluster_state:ok")
		case <-time.After(100 * time.Millisecond):
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
