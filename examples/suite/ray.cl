// A ray tracer after Accelerate's ray: spheres over a floor, one point
// light with shadows, and reflections. Rays advance one bounce per launch,
// each launch writing fresh ray arrays: position, direction (w: the ray's
// remaining weight, 0 when it is done) and the colour gathered so far.
// Products are not contracted so that the Go reference follows closely.

#pragma OPENCL FP_CONTRACT OFF

float dot3(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// nearest returns the distance along d from p to the nearest sphere, and
// its index in *hit (-1: none).
float nearest(float4 p, float4 d, __global const float4 *spheres, int *hit)
{
	float best = INFINITY;
	*hit = -1;
	for (int s = 0; s < Scene.Spheres; s++) {
		float4 oc = p - spheres[s];
		float b = dot3(oc, d);
		float disc = b * b - (dot3(oc, oc) - spheres[s].w * spheres[s].w);
		if (disc > 0.0f) {
			float t = -b - sqrt(disc);
			if (t > 1e-3f && t < best) {
				best = t;
				*hit = s;
			}
		}
	}
	return best;
}

__kernel void ray_primary(__global float4 *pos, __global float4 *dir, __global float4 *colour,
                          int w, int h)
{
	int i = get_global_id(0);
	if (i >= w * h)
		return;
	float4 eye = (float4)(Scene.Eye[0], Scene.Eye[1], Scene.Eye[2], 0.0f);
	float4 d = (float4)((float)(i % w) - (float)(w / 2), (float)(h / 2) - (float)(i / w), 0.0f, 0.0f) - eye;
	float len = sqrt(dot3(d, d));
	pos[i] = eye;
	dir[i] = (float4)(d.x / len, d.y / len, d.z / len, 1.0f);
	colour[i] = (float4)(0.0f);
}

__kernel void ray_bounce(__global float4 *npos, __global float4 *ndir, __global float4 *ncolour,
                         __global const float4 *pos, __global const float4 *dir,
                         __global const float4 *colour, __global const float4 *spheres,
                         __global const float4 *paint, int n)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	float4 p = pos[i], d = dir[i], c = colour[i];
	if (d.w == 0.0f) {
		npos[i] = p;
		ndir[i] = d;
		ncolour[i] = c;
		return;
	}
	int hit;
	float t = nearest(p, d, spheres, &hit);
	float4 normal = (float4)(0.0f, 1.0f, 0.0f, 0.0f), look = (float4)(0.6f, 0.6f, 0.6f, 0.3f);
	if (d.y < 0.0f) {
		float tf = (Scene.FloorY - p.y) / d.y;
		if (tf > 1e-3f && tf < t) {
			t = tf;
			hit = -2;
		}
	}
	if (hit == -1) { // the sky
		ncolour[i] = c + d.w * (float4)(0.2f, 0.3f, 0.5f, 0.0f);
		npos[i] = p;
		ndir[i] = (float4)(d.x, d.y, d.z, 0.0f);
		return;
	}
	float4 hp = p + t * d;
	hp.w = 0.0f;
	if (hit >= 0) {
		float4 s = spheres[hit];
		normal = (float4)((hp.x - s.x) / s.w, (hp.y - s.y) / s.w, (hp.z - s.z) / s.w, 0.0f);
		look = paint[hit];
	}
	float4 l = (float4)(Scene.Light[0], Scene.Light[1], Scene.Light[2], 0.0f) - hp;
	float dist = sqrt(dot3(l, l));
	l = (float4)(l.x / dist, l.y / dist, l.z / dist, 0.0f);
	float diffuse = fmax(dot3(normal, l), 0.0f);
	int blocker;
	if (diffuse > 0.0f && nearest(hp, l, spheres, &blocker) < dist)
		diffuse = 0.0f;
	float shade = Scene.Ambient + (1.0f - Scene.Ambient) * diffuse;
	float k = d.w * (1.0f - look.w) * shade;
	ncolour[i] = (float4)(c.x + k * look.x, c.y + k * look.y, c.z + k * look.z, 0.0f);
	float dn = 2.0f * dot3(d, normal);
	ndir[i] = (float4)(d.x - dn * normal.x, d.y - dn * normal.y, d.z - dn * normal.z, d.w * look.w);
	npos[i] = hp;
}
