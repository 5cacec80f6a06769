package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/metrics"
)

// Two allocation sites of two packages that share a short name, as
// dgen registers them: each has its own ID and tag, and the same Name.
var scratchA, scratchB rt.AllocSite[float32]

var (
	_ = codegen.Register(&codegen.AllocSite{ID: "example.com/a.scratch", Name: "scratch", Var: codegen.AllocSiteVar(&scratchA)})
	_ = codegen.Register(&codegen.AllocSite{ID: "example.com/b.scratch", Name: "scratch", Var: codegen.AllocSiteVar(&scratchB)})
)

// TestCollectorSitesOfOneName scrapes a context whose allocations come
// from two sites of one name: the scrape succeeds, with one series per
// device and site name whose values are the sum of the sites'.
func TestCollectorSitesOfOneName(t *testing.T) {
	ctx := busyContext(t)
	q := ctx.Queue()
	a, err := scratchA.Alloc(q, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := scratchB.Alloc(q, 2048)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if scratchA.Tag() == scratchB.Tag() {
		t.Fatalf("the two sites share tag %d", scratchA.Tag())
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewCollector(ctx, "test"))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	d := ctx.Stats().Alloc.Devices[0]
	ta, tb := d.Tag(alloc.Tag(scratchA.Tag())), d.Tag(alloc.Tag(scratchB.Tag()))
	labels := map[string]string{"device": "0", "device_name": d.Device, "site": "scratch"}
	for _, tt := range []struct {
		family string
		want   float64
	}{
		{"dgen_alloc_in_use_bytes", float64(ta.InUse + tb.InUse)},
		{"dgen_alloc_requests_total", float64(ta.Requests + tb.Requests)},
	} {
		if got, ok := find(mfs, tt.family, labels); !ok || got != tt.want {
			t.Errorf("%s%v = %v (found %v), want %v", tt.family, labels, got, ok, tt.want)
		}
	}
}
