// k-means clustering of 2-D points, after Accelerate's kmeans: assign
// gives each point its nearest centroid and counts the points that moved
// in the device global Changed; update averages each cluster's points in
// one work-group. The number of clusters is the specialization constant
// Clusters.

__kernel void kmeans_assign(__global int *membership, __global const float *xs,
                            __global const float *ys, __global const float *centroids,
                            __global const int *previous, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float x = xs[i], y = ys[i];
	int best = 0;
	float bestd = INFINITY;
	for (int c = 0; c < Clusters; c++) {
		float dx = x - centroids[2 * c], dy = y - centroids[2 * c + 1];
		float d = dx * dx + dy * dy;
		if (d < bestd) {
			bestd = d;
			best = c;
		}
	}
	membership[i] = best;
	if (best != previous[i])
		atomic_inc(&Changed);
}

// One work-group per cluster: each work-item sums a strided share of the
// cluster's points, then the group reduces in local memory.
__kernel void kmeans_update(__global float *centroids, __global const float *xs,
                            __global const float *ys, __global const int *membership,
                            __global const float *previous, int n,
                            __local float *sx, __local float *sy, __local int *count)
{
	int c = get_group_id(0), l = get_local_id(0), size = get_local_size(0);
	float ax = 0, ay = 0;
	int k = 0;
	for (int i = l; i < n; i += size) {
		if (membership[i] == c) {
			ax += xs[i];
			ay += ys[i];
			k++;
		}
	}
	sx[l] = ax;
	sy[l] = ay;
	count[l] = k;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = size / 2; s > 0; s /= 2) {
		if (l < s) {
			sx[l] += sx[l + s];
			sy[l] += sy[l + s];
			count[l] += count[l + s];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (l == 0) {
		// An empty cluster keeps its centroid.
		centroids[2 * c] = count[0] ? sx[0] / count[0] : previous[2 * c];
		centroids[2 * c + 1] = count[0] ? sy[0] / count[0] : previous[2 * c + 1];
	}
}
