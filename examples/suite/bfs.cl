// Breadth-first search, level by level, after Rodinia's bfs: expand marks
// the unvisited neighbours of the frontier in a fresh array, update makes
// them the next frontier and raises the device global Over.

__kernel void bfs_expand(__global uchar *updating, __global const int *start,
                         __global const int *degree, __global const int *edges,
                         __global const uchar *frontier, __global const uchar *visited,
                         __global int *cost, int n)
{
	int i = get_global_id(0);
	if (i >= n || !frontier[i])
		return;
	int end = start[i] + degree[i];
	for (int e = start[i]; e < end; e++) {
		int id = edges[e];
		if (!visited[id]) {
			cost[id] = cost[i] + 1;
			updating[id] = 1;
		}
	}
}

__kernel void bfs_update(__global uchar *next, __global const uchar *updating,
                         __global uchar *visited, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	uchar u = updating[i];
	next[i] = u;
	if (u) {
		visited[i] = 1;
		Over = 1;
	}
}
