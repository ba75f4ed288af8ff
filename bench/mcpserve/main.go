// Command mcpserve compares MCP servers under load: this module's mcpserver,
// a plain server of the official Go SDK (mcp.AddTool) and
// github.com/mark3labs/mcp-go, each serving one tool, add, over streamable
// HTTP on loopback, stateful and stateless, to 1, 8 and 32 concurrent
// sessions of the Go SDK's client.
//
// Every server runs in a process of its own (this program, started again), so
// that its CPU time and allocations are its own; the client runs here. The
// measurements are interleaved: every round measures every server once per
// mode and session count, in an order that rotates from round to round, and
// the report gives the median of the rounds. For each it reports calls per
// second, the 50th and 99th percentile latency of one call, the server's CPU
// time per call and the cores it used, the bytes it allocated per call and the
// bytes per call on the wire (both directions).
//
// Usage:
//
//	go run . [-rounds 5] [-duration 10s] [-warmup 2s] [-sessions 1,8,32]
//	         [-servers mcpserver,gosdk,mcpgo] [-modes stateful,stateless]
//	         [-server-gogc 100] [-json results.json]
//
// Take figures on an otherwise idle machine; see README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveEnv makes this program a server process: "kind" or "kind,stateless".
const serveEnv = "MCSBENCH_SERVE"

func main() {
	if spec := os.Getenv(serveEnv); spec != "" {
		kind, mode, _ := strings.Cut(spec, ",")
		if err := serve(kind, mode == "stateless"); err != nil {
			fmt.Fprintln(os.Stderr, "mcpserve:", err)
			os.Exit(1)
		}
		return
	}
	var cfg config
	var sessions, servers, modes string
	flag.IntVar(&cfg.rounds, "rounds", 5, "rounds; each measures every server, mode and session count once")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long one measurement runs")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "load before each measurement, not counted")
	flag.StringVar(&sessions, "sessions", "1,8,32", "concurrent client sessions, comma-separated")
	flag.StringVar(&servers, "servers", strings.Join(kinds, ","), "servers to compare: mcpserver, gosdk, mcpgo")
	flag.StringVar(&modes, "modes", "stateful,stateless", "stateful, stateless or both")
	flag.StringVar(&cfg.gogc, "server-gogc", "", "GOGC of the server processes (default: the Go default, 100)")
	flag.StringVar(&cfg.jsonOut, "json", "", "also write every measurement to this file as JSON")
	flag.Parse()
	var err error
	if cfg.sessions, err = ints(sessions); err != nil {
		fail(fmt.Errorf("-sessions: %w", err))
	}
	cfg.servers = strings.Split(servers, ",")
	for _, k := range cfg.servers {
		if !slices.Contains(kinds, k) {
			fail(fmt.Errorf("-servers: unknown server %q; use %v", k, kinds))
		}
	}
	for _, m := range strings.Split(modes, ",") {
		switch m {
		case "stateful":
			cfg.modes = append(cfg.modes, false)
		case "stateless":
			cfg.modes = append(cfg.modes, true)
		default:
			fail(fmt.Errorf("-modes: %q is neither stateful nor stateless", m))
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	cfg.exe = exe
	results, err := run(context.Background(), cfg, os.Stderr)
	if err != nil {
		fail(err)
	}
	report(os.Stdout, results)
	if cfg.jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(cfg.jsonOut, b, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mcpserve:", err)
	os.Exit(2)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// config is one run of the benchmark.
type config struct {
	rounds           int
	duration, warmup time.Duration
	sessions         []int
	servers          []string
	modes            []bool // stateless?
	gogc             string
	jsonOut          string
	exe              string   // the program that serves (this one)
	exeArgs          []string // its arguments (tests: -test.run=^$)
}

// result is one measurement.
type result struct {
	Server    string        `json:"server"`
	Stateless bool          `json:"stateless"`
	Sessions  int           `json:"sessions"`
	Round     int           `json:"round"`
	Calls     int           `json:"calls"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	CPU       time.Duration `json:"server_cpu_ns"`
	Alloc     uint64        `json:"server_alloc_bytes"`
	GCs       uint32        `json:"server_gcs"`
	Wire      int64         `json:"wire_bytes"`
	MaxRSS    int64         `json:"server_maxrss_bytes"` // the server process's peak resident set
}

func (r result) callsPerSec() float64  { return float64(r.Calls) / r.Elapsed.Seconds() }
func (r result) cpuPerCall() float64   { return float64(r.CPU.Microseconds()) / float64(r.Calls) }
func (r result) cores() float64        { return r.CPU.Seconds() / r.Elapsed.Seconds() }
func (r result) allocPerCall() float64 { return float64(r.Alloc) / float64(r.Calls) }
func (r result) wirePerCall() float64  { return float64(r.Wire) / float64(r.Calls) }

// run measures every combination cfg.rounds times, interleaved.
func run(ctx context.Context, cfg config, log io.Writer) ([]result, error) {
	var out []result
	for round := range cfg.rounds {
		for _, stateless := range cfg.modes {
			for _, n := range cfg.sessions {
				order := slices.Clone(cfg.servers)
				k := round % len(order)
				order = append(order[k:], order[:k]...)
				for _, kind := range order {
					r, err := measure(ctx, cfg, kind, stateless, n)
					if err != nil {
						return out, fmt.Errorf("%s %s with %d sessions: %w", kind, modeName(stateless), n, err)
					}
					r.Round = round + 1
					fmt.Fprintf(log, "round %d: %-9s %-9s N=%-3d %8.0f calls/s  p50 %6.2f ms  p99 %6.2f ms  cpu %6.1f µs/call\n",
						r.Round, kind, modeName(stateless), n, r.callsPerSec(), ms(r.P50), ms(r.P99), r.cpuPerCall())
					out = append(out, r)
				}
			}
		}
	}
	return out, nil
}

func modeName(stateless bool) string {
	if stateless {
		return "stateless"
	}
	return "stateful"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// measure starts a server process, connects n sessions, loads it for the
// warm-up, then measures for the duration.
func measure(ctx context.Context, cfg config, kind string, stateless bool, n int) (result, error) {
	spec := kind
	if stateless {
		spec += ",stateless"
	}
	cmd := exec.CommandContext(ctx, cfg.exe, cfg.exeArgs...)
	cmd.Env = append(os.Environ(), serveEnv+"="+spec)
	if cfg.gogc != "" {
		cmd.Env = append(cmd.Env, "GOGC="+cfg.gogc)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return result{}, fmt.Errorf("the server process printed no address: %w", err)
	}
	base := "http://" + strings.TrimSpace(addr)

	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	defer hc.CloseIdleConnections()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "mcpserve", Version: "1"}, nil)
	sessions := make([]*mcpsdk.ClientSession, n)
	for i := range sessions {
		cs, err := client.Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			return result{}, fmt.Errorf("connect: %w", err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	if _, err := load(ctx, sessions, cfg.warmup); err != nil {
		return result{}, err
	}
	before, err := fetchStats(ctx, hc, base)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	lat, err := load(ctx, sessions, cfg.duration)
	elapsed := time.Since(start)
	if err != nil {
		return result{}, err
	}
	after, err := fetchStats(ctx, hc, base)
	if err != nil {
		return result{}, err
	}
	if len(lat) == 0 {
		return result{}, errors.New("no call completed")
	}
	slices.Sort(lat)
	return result{
		Server: kind, Stateless: stateless, Sessions: n,
		Calls: len(lat), Elapsed: elapsed,
		P50: lat[len(lat)/2], P99: lat[len(lat)*99/100],
		CPU:    after.CPU - before.CPU,
		Alloc:  after.Alloc - before.Alloc,
		GCs:    after.GCs - before.GCs,
		Wire:   (after.WireIn - before.WireIn) + (after.WireOut - before.WireOut),
		MaxRSS: after.MaxRSS,
	}, nil
}

// load calls add on every session, each in a loop of its own, for d, and
// returns the latency of every call.
func load(ctx context.Context, sessions []*mcpsdk.ClientSession, d time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 4096)
			args := map[string]any{"a": 2, "b": 40}
			var err error
			for time.Now().Before(deadline) {
				t0 := time.Now()
				var res *mcpsdk.CallToolResult
				res, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "add", Arguments: args})
				if err == nil && res.IsError {
					err = fmt.Errorf("add failed: %v", res.Content)
				}
				if err != nil {
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, firstErr
}

func fetchStats(ctx context.Context, hc *http.Client, base string) (stats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stats", nil)
	if err != nil {
		return stats{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return stats{}, fmt.Errorf("stats: %w", err)
	}
	defer resp.Body.Close()
	var s stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return stats{}, fmt.Errorf("stats: %w", err)
	}
	return s, nil
}

// report prints the median over the rounds of every combination, as a
// Markdown table.
func report(w io.Writer, results []result) {
	type key struct {
		server    string
		stateless bool
		sessions  int
	}
	groups := map[key][]result{}
	var keys []key
	for _, r := range results {
		k := key{r.Server, r.Stateless, r.Sessions}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		switch {
		case a.stateless != b.stateless:
			if a.stateless {
				return 1
			}
			return -1
		case a.sessions != b.sessions:
			return a.sessions - b.sessions
		}
		return 0
	})
	fmt.Fprintln(w, "| server | mode | sessions | calls/s | p50 ms | p99 ms | server CPU µs/call | server cores | alloc B/call | wire B/call | rounds |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range keys {
		g := groups[k]
		med := func(f func(result) float64) float64 {
			v := make([]float64, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.2f | %.2f | %.1f | %.2f | %.0f | %.0f | %d |\n", k.server, modeName(k.stateless), k.sessions,
			med(result.callsPerSec), med(func(r result) float64 { return ms(r.P50) }), med(func(r result) float64 { return ms(r.P99) }),
			med(result.cpuPerCall), med(result.cores), med(result.allocPerCall), med(result.wirePerCall), len(g))
	}
}
