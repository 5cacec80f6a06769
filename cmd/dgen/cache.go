package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/fleetcache"
)

const cacheUsage = `usage: dgen cache <ls|stat|verify|clear|gc> [-json] [arguments]

  ls               list entries, least recently used first; tuning records
                   (rt.SpecConst.Tune) show their constant and winner
  stat             totals, overall and per device, and the counters of the
                   remote tier (DGEN_CACHE_REMOTE) that processes recorded
  verify [-remove] check every checksum; -remove deletes bad entries
  clear [DEVICE]   remove every entry, or those of devices whose hash starts
                   with DEVICE or whose name or platform contains it
  gc               evict now: entries older than DGEN_CACHE_MAX_AGE,
                   then least recently used ones down to half DGEN_CACHE_MAX_SIZE

The cache is the one DGEN_CACHE_DIR names (default: the user cache directory + /dgen),
with the other DGEN_CACHE_ settings of the environment (dgen env lists them).
`

// remoteStats is what `dgen cache stat` says of the remote tier.
type remoteStats struct {
	URL string `json:"url"` // DGEN_CACHE_REMOTE, without its password
	fleetcache.Stats
}

func remoteStat(dir string, cfg rt.RemoteCacheConfig) remoteStats {
	r := remoteStats{URL: "none"}
	if cfg.URL != "" {
		r.URL = fleetcache.Redact(cfg.URL)
	}
	r.Stats, _ = fleetcache.Recorded(dir)
	return r
}

// diskConfig returns the persistent cache of the environment's
// configuration, for management only: it never creates the root.
func diskConfig() (diskcache.Config, rt.RemoteCacheConfig, error) {
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		return diskcache.Config{}, rt.RemoteCacheConfig{}, err
	}
	d := cfg.Cache.Disk
	return diskcache.Config{Dir: d.Dir, MaxSize: d.MaxSize, MaxAge: d.MaxAge, EvictionDisabled: d.EvictionDisabled,
		MinImageSize: d.MinImageSize, MaxImageSize: d.MaxImageSize, LockTimeout: d.LockTimeout}, cfg.Cache.Remote, nil
}

// runCache is `dgen cache`: explore and manage the persistent program cache.
func runCache(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(stderr, cacheUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("dgen cache "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	remove := fs.Bool("remove", false, "verify: remove bad entries")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg, remote, err := diskConfig() // Persistent false: manage only, never create the root
	if err != nil {
		fmt.Fprintf(stderr, "dgen cache: %v\n", err)
		return 1
	}
	c, err := diskcache.Open(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "dgen cache: %v\n", err)
		return 1
	}
	report, ok := cacheReports[sub]
	if !ok {
		fmt.Fprintf(stderr, "dgen cache: unknown subcommand %q\n%s", sub, cacheUsage)
		return 2
	}
	out, print, err := report(c, fs, cacheOpts{remove: *remove, remote: remote})
	if err != nil {
		return fail(stderr, sub, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return fail(stderr, sub, err)
		}
	} else {
		print(stdout)
	}
	if sub == "verify" {
		if r := out.(diskcache.VerifyReport); len(r.Bad) > 0 && !*remove {
			return 1
		}
	}
	return 0
}

// A cacheReport runs one `dgen cache` subcommand on c and returns its
// result for -json and the function that prints it as text.
type cacheReport func(c *diskcache.Cache, fs *flag.FlagSet, o cacheOpts) (any, func(io.Writer), error)

// cacheOpts are what a cacheReport takes besides the cache: -remove, and
// the remote tier that the environment configures.
type cacheOpts struct {
	remove bool
	remote rt.RemoteCacheConfig
}

var cacheReports = map[string]cacheReport{
	"ls":     cacheList,
	"stat":   cacheStat,
	"verify": cacheVerify,
	"clear":  cacheClear,
	"gc":     cacheGC,
}

// listEntry is an entry as dgen cache ls shows it: with its
// specialization-constant values decoded, which tell the variants of one
// program apart.
type listEntry struct {
	diskcache.EntryInfo
	Specs string `json:"specs,omitempty"`
}

func cacheList(c *diskcache.Cache, _ *flag.FlagSet, o cacheOpts) (any, func(io.Writer), error) {
	infos, err := c.List()
	ents := make([]listEntry, len(infos))
	for i, e := range infos {
		ents[i] = listEntry{e, specValues(e.SpecConsts)}
	}
	return ents, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DEVICE\tPLATFORM\tIMAGE\tPROGRAM\tSPEC\tOPTIONS\tSIZE\tLAST ACCESS")
		for _, e := range ents {
			dev := e.DeviceHash[:min(8, len(e.DeviceHash))]
			if e.Device.Name != "" {
				dev += " " + e.Device.Name
			}
			img, prog := e.ImageID, tuneLabel(c, e.EntryInfo) // tune.go
			if e.Err != "" {
				img, prog = "?", "error: "+e.Err
			}
			spec := e.Specs
			if spec == "" {
				spec = "-"
			}
			// The platform names the backend: rt/cuda's is "CUDA driver API".
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dev, e.Device.Platform, img, prog, spec, e.Options, humanSize(e.Size), e.LastAccess.Format(time.DateTime))
		}
		tw.Flush()
		fmt.Fprintf(w, "%d entries in %s\n", len(ents), c.Dir())
	}, err
}

// specValues returns the specialization-constant values of a cache key as
// "Name=value" words, sorted by name as the key holds them: the encoding
// of rt's program cache (each name and value preceded by its length as a
// uvarint). A key that does not decode is shown in hexadecimal.
func specValues(enc []byte) string {
	var words []string
	for b := enc; len(b) > 0; {
		var pair [2]string
		for i := range pair {
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) {
				return fmt.Sprintf("%x", enc)
			}
			pair[i], b = string(b[k:k+int(n)]), b[k+int(n):]
		}
		words = append(words, pair[0]+"="+pair[1])
	}
	return strings.Join(words, " ")
}

func cacheStat(c *diskcache.Cache, _ *flag.FlagSet, o cacheOpts) (any, func(io.Writer), error) {
	s, err := c.Stat()
	remote := remoteStat(c.Dir(), o.remote)
	out := struct {
		diskcache.Stats
		Remote remoteStats `json:"remote"`
	}{s, remote}
	return out, func(w io.Writer) {
		fmt.Fprintf(w, "directory    %s\nentries      %d\nsize         %s (recorded %s)\nmax size     %s\nmax age      %v\n",
			s.Dir, s.Entries, humanSize(s.Size), humanSize(s.RecordedSize), humanSize(s.MaxSize), s.MaxAge)
		r := remote.Stats
		fmt.Fprintf(w, "remote       %s\n             %d hits, %d misses, %d publishes, %d errors, %d rejected, %d waits\n",
			remote.URL, r.Hits, r.Misses, r.Publishes, r.Errors, r.Rejected, r.Waits)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "\nDEVICE\tNAME\tPLATFORM\tENTRIES\tSIZE")
		for _, d := range s.Devices {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", d.Hash, d.Device.Name, d.Device.Platform, d.Entries, humanSize(d.Size))
		}
		tw.Flush()
	}, err
}

func cacheVerify(c *diskcache.Cache, _ *flag.FlagSet, o cacheOpts) (any, func(io.Writer), error) {
	r, err := c.Verify(o.remove)
	return r, func(w io.Writer) {
		for _, b := range r.Bad {
			fmt.Fprintf(w, "BAD %s: %s\n", b.Path, b.Error)
		}
		fmt.Fprintf(w, "%d checked, %d bad, %d removed, %d skipped (in use)\n", r.Checked, len(r.Bad), r.Removed, r.Skipped)
	}, err
}

func cacheClear(c *diskcache.Cache, fs *flag.FlagSet, o cacheOpts) (any, func(io.Writer), error) {
	r, err := c.Clear(fs.Arg(0))
	return r, func(w io.Writer) {
		fmt.Fprintf(w, "removed %d entries (%s), %d skipped (in use)\n", r.Removed, humanSize(r.Freed), r.Skipped)
	}, err
}

func cacheGC(c *diskcache.Cache, _ *flag.FlagSet, o cacheOpts) (any, func(io.Writer), error) {
	r, err := c.GC()
	return r, func(w io.Writer) {
		fmt.Fprintf(w, "removed %d entries (%s), %d left (%s), %d skipped (in use), %d directories pruned\n",
			r.Removed, humanSize(r.Freed), r.Remaining, humanSize(r.Size), r.Skipped, r.Pruned)
	}, err
}

func fail(w io.Writer, sub string, err error) int {
	fmt.Fprintf(w, "dgen cache %s: %v\n", sub, err)
	return 1
}

func humanSize(n int64) string {
	switch {
	case n < 0:
		return "?"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
