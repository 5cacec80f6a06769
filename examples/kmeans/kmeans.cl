// One iteration of k-means over points of D integer coordinates and K
// clusters, D and K specialization constants (macros here). The
// arithmetic is on integers, so that the sums do not depend on the order
// of the atomics and every result matches the Go reference exactly.

// assign labels each of the n points with its nearest centroid by squared
// distance, the lowest index among equals.
__kernel void assign(__global const int *points, __global const int *centroids, __global int *labels, int n) {
	int i = get_global_id(0);
	if (i >= n)
		return;
	int best = 0, bestd = INT_MAX;
	for (int k = 0; k < K; k++) {
		int d = 0;
		for (int j = 0; j < D; j++) {
			int x = points[i * D + j] - centroids[k * D + j];
			d += x * x;
		}
		if (d < bestd) {
			best = k;
			bestd = d;
		}
	}
	labels[i] = best;
}

// accumulate adds each of the n points to its cluster's row of acc: D sums
// and a count per cluster. A work-group sums its points in local memory
// and adds its totals to acc with one atomic each.
__kernel void accumulate(__global const int *points, __global const int *labels, __global int *acc, int n) {
	__local int part[K * (D + 1)];
	int l = get_local_id(0), ls = get_local_size(0);
	for (int j = l; j < K * (D + 1); j += ls)
		part[j] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	int i = get_global_id(0);
	if (i < n) {
		__local int *row = part + labels[i] * (D + 1);
		for (int j = 0; j < D; j++)
			atomic_add(&row[j], points[i * D + j]);
		atomic_inc(&row[D]);
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int j = l; j < K * (D + 1); j += ls)
		if (part[j] != 0)
			atomic_add(&acc[j], part[j]);
}

// update moves each centroid to the mean of its cluster's points, rounded
// toward zero; a centroid without points stays.
__kernel void update(__global const int *acc, __global int *centroids) {
	int i = get_global_id(0), k = i / D;
	int count = acc[k * (D + 1) + D];
	if (count > 0)
		centroids[i] = acc[k * (D + 1) + i % D] / count;
}
