package main

import (
	"errors"
	"math"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// MarketParams is the market of Black-Scholes, as OpenCL C lays out struct
// MarketParams.
type MarketParams struct {
	Rate, Volatility float32
}

// Market is the market every option is priced in; the host only writes it.
//
//dgen:global host_access=write
var Market rt.DeviceGlobal[MarketParams]

// Pricing is the image of optionpricing.cl.
//
//dgen:program source=optionpricing.cl
var Pricing rt.Program

// BlackScholes prices N options for one day: Call and Put are allocated
// by each day's launch.
//
//dgen:kernel program=Pricing name=black_scholes
type BlackScholes struct {
	Call    rt.Buffer[float32] `dgen:"out"`
	Put     rt.Buffer[float32] `dgen:"out"`
	Spot    rt.Buffer[float32]
	Strike  rt.Buffer[float32]
	Years   rt.Buffer[float32]
	Elapsed float32
	N       int32
}

// pricingDays is the number of trading days each run prices.
const pricingDays = 8

var market = MarketParams{Rate: 0.02, Volatility: 0.30}

// optionPricing prices Size.N options (Black-Scholes) on each of 8 days,
// allocating the day's call and put prices inside the loop. It stands for
// Futhark's finpar OptionPricing, a Monte Carlo pricer we do not port:
// both are one large map per step over independent options.
var optionPricing = Program{
	Name:   "optionpricing",
	Source: "finpar/OptionPricing.fut (Black-Scholes here)",
	Datasets: []Dataset{
		{Name: "small", Futhark: 1.10, GPU: Size{N: 1 << 16}, Small: Size{N: 1 << 12}},
		{Name: "medium", Futhark: 1.26, GPU: Size{N: 1 << 20}, Small: Size{N: 1 << 15}},
		{Name: "large", Futhark: 1.04, GPU: Size{N: 1 << 23}, Small: Size{N: 1 << 18}},
	},
	Test: Size{N: 3000},
	New:  newPricing,
}

type pricingCase struct {
	e                    *Env
	spot, strike, years  []float32
	dSpot, dStrike, dYrs rt.Buffer[float32]
	call, put            rt.Buffer[float32]
}

func newPricing(e *Env, s Size, seed uint64) (Case, error) {
	r := rand.New(rand.NewPCG(seed, 0xb5))
	c := &pricingCase{e: e, spot: make([]float32, s.N), strike: make([]float32, s.N), years: make([]float32, s.N)}
	for i := range s.N {
		c.spot[i] = 5 + 25*r.Float32()
		c.strike[i] = 1 + 99*r.Float32()
		c.years[i] = 0.25 + 9.75*r.Float32()
	}
	var err error
	if c.dSpot, err = upload(e, c.spot); err != nil {
		return nil, err
	}
	if c.dStrike, err = upload(e, c.strike); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if c.dYrs, err = upload(e, c.years); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := Market.Write(e.Q, market); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (c *pricingCase) Run() error {
	if err := free(c.call, c.put); err != nil {
		return err
	}
	c.call, c.put = rt.Buffer[float32]{}, rt.Buffer[float32]{}
	n := len(c.spot)
	for day := range pricingDays {
		k := BlackScholes{Spot: c.dSpot, Strike: c.dStrike, Years: c.dYrs, Elapsed: float32(day) / 365, N: int32(n)}
		if err := allocOut(c.e, k.AllocCall, &k.Call, n); err != nil {
			return err
		}
		if err := allocOut(c.e, k.AllocPut, &k.Put, n); err != nil {
			return errors.Join(err, k.Call.Free())
		}
		err := k.Enqueue(c.e.Q, rt.Range1(n))
		// A day's prices live until the next day's are computed.
		err = errors.Join(err, free(c.call, c.put))
		c.call, c.put = k.Call, k.Put
		if err != nil {
			return err
		}
	}
	return c.e.Q.Finish()
}

func (c *pricingCase) Verify() error {
	call, err := download(c.e, c.call)
	if err != nil {
		return err
	}
	put, err := download(c.e, c.put)
	if err != nil {
		return err
	}
	wantCall, wantPut := make([]float32, len(c.spot)), make([]float32, len(c.spot))
	elapsed := float64(float32(pricingDays-1) / 365)
	for i := range c.spot {
		wantCall[i], wantPut[i] = blackScholesRef(float64(c.spot[i]), float64(c.strike[i]), math.Max(float64(c.years[i])-elapsed, 1.0/365))
	}
	return errors.Join(near("call", call, wantCall, 2e-3, 1e-3), near("put", put, wantPut, 2e-3, 1e-3))
}

// blackScholesRef prices one option in float64 with the exact normal
// distribution.
func blackScholesRef(s, x, t float64) (call, put float32) {
	r, v := float64(market.Rate), float64(market.Volatility)
	cnd := func(d float64) float64 { return 0.5 * math.Erfc(-d/math.Sqrt2) }
	d1 := (math.Log(s/x) + (r+0.5*v*v)*t) / (v * math.Sqrt(t))
	d2 := d1 - v*math.Sqrt(t)
	disc := x * math.Exp(-r*t)
	return float32(s*cnd(d1) - disc*cnd(d2)), float32(disc*cnd(-d2) - s*cnd(-d1))
}

func (c *pricingCase) Close() error {
	return free(c.dSpot, c.dStrike, c.dYrs, c.call, c.put)
}
