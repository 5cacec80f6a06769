// Black-Scholes pricing of European call and put options, standing in for
// Futhark's finpar OptionPricing: one launch prices every option for one
// trading day; the market (rate, volatility) is a device global.

// Cumulative normal distribution: the polynomial approximation of
// Abramowitz and Stegun (26.2.17), as in NVIDIA's BlackScholes sample.
float cnd(float d) {
	const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f,
	            a4 = -1.821255978f, a5 = 1.330274429f;
	float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
	float c = 0.39894228040143267794f * exp(-0.5f * d * d) *
	          (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
	return d > 0 ? 1.0f - c : c;
}

__kernel void black_scholes(__global float *call, __global float *put,
                            __global const float *spot, __global const float *strike,
                            __global const float *years, float elapsed, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float s = spot[i], x = strike[i];
	float t = fmax(years[i] - elapsed, 1.0f / 365.0f);
	float sq = sqrt(t);
	float d1 = (log(s / x) + (Market.Rate + 0.5f * Market.Volatility * Market.Volatility) * t) /
	           (Market.Volatility * sq);
	float d2 = d1 - Market.Volatility * sq;
	float disc = x * exp(-Market.Rate * t);
	call[i] = s * cnd(d1) - disc * cnd(d2);
	put[i] = disc * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}
