__constant sampler_t cs_lin = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
__constant sampler_t cs_clamp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void rd_f(__read_only image2d_t a, sampler_t s, __global float4 *o) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); o[p.y * get_image_width(a) + p.x] = read_imagef(a, s, p); }
__kernel void rd_ff(__read_only image2d_t a, sampler_t s, __global float4 *o, float2 d) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (float2)(i * d.x, i * d.y)); }
__kernel void rd_ui(__read_only image2d_t a, sampler_t s, __global uint4 *o) {
	int i = get_global_id(0); o[i] = read_imageui(a, s, (int2)(i, 1)); }
__kernel void rd_i(__read_only image2d_t a, __global int4 *o) {
	int i = get_global_id(0); o[i] = read_imagei(a, cs_clamp, (int2)(i, 1)); }
__kernel void rd_nos(__read_only image2d_t a, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, (int2)(i, 1)); }
__kernel void rd_cl(__read_only image2d_t a, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, cs_lin, (float2)(i * 0.1f, 0.3f)); }
__kernel void two(__read_only image2d_t a, __read_only image2d_t b, sampler_t s, sampler_t t, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int2)(i, 0)) + read_imagef(b, s, (int2)(i, 0)) + read_imagef(a, t, (float2)(i, 0)) + read_imagef(b, cs_clamp, (int2)(i, 0)); }
__kernel void wr_f(__write_only image2d_t a, float4 v) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); write_imagef(a, p, v); }
__kernel void wr_ui(__write_only image2d_t a, uint4 v) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); write_imageui(a, p, v); }
__kernel void wr_i(__write_only image2d_t a, int4 v) {
	int2 p = (int2)(get_global_id(0), get_global_id(1)); write_imagei(a, p, v); }
__kernel void q(__read_only image3d_t a, __write_only image2d_t b, __global int *o) {
	o[0] = get_image_width(a); o[1] = get_image_height(a); o[2] = get_image_depth(a);
	o[3] = get_image_channel_data_type(a); o[4] = get_image_channel_order(a);
	o[5] = get_image_width(b); o[6] = get_image_height(b); o[7] = get_image_channel_order(b); }
__kernel void r3(__read_only image3d_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int4)(i, 1, 2, 0)); }
__kernel void w3(__write_only image3d_t a, float4 v) {
	write_imagef(a, (int4)(get_global_id(0), 1, 2, 0), v); }
__kernel void r1(__read_only image1d_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, i); }
__kernel void w1(__write_only image1d_t a, float4 v) { write_imagef(a, get_global_id(0), v); }
__kernel void r1b(__read_only image1d_buffer_t a, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, i) ; o[i+1] = (float4)(get_image_width(a)); }
__kernel void w1b(__write_only image1d_buffer_t a, float4 v) { write_imagef(a, get_global_id(0), v); }
__kernel void r1a(__read_only image1d_array_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int2)(i, 1)); o[i+1] = (float4)(get_image_array_size(a)); }
__kernel void w1a(__write_only image1d_array_t a, float4 v) { write_imagef(a, (int2)(get_global_id(0), 1), v); }
__kernel void r2a(__read_only image2d_array_t a, sampler_t s, __global float4 *o) {
	int i = get_global_id(0); o[i] = read_imagef(a, s, (int4)(i, 1, 2, 0)); o[i+1] = (float4)(get_image_array_size(a)); }
__kernel void w2a(__write_only image2d_array_t a, float4 v) { write_imagef(a, (int4)(get_global_id(0), 1, 2, 0), v); }
__kernel void plain(__global float *o) { o[get_global_id(0)] = 1; }
float4 helper(__read_only image2d_t a, sampler_t s, int i) { return read_imagef(a, s, (int2)(i, i)); }
__kernel void viafunc(__read_only image2d_t a, sampler_t s, __global float4 *o, int c) {
	int i = get_global_id(0); o[i] = helper(a, s, i + c); }
__constant sampler_t s_false_none_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void k_s_false_none_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_none_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_none_linear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_LINEAR;
__kernel void k_s_false_none_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_none_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_clamp_to_edge_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void k_s_false_clamp_to_edge_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_clamp_to_edge_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_clamp_to_edge_linear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;
__kernel void k_s_false_clamp_to_edge_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_clamp_to_edge_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_clamp_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void k_s_false_clamp_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_clamp_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_clamp_linear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR;
__kernel void k_s_false_clamp_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_clamp_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_repeat_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST;
__kernel void k_s_false_repeat_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_repeat_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_repeat_linear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
__kernel void k_s_false_repeat_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_repeat_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_mirrored_repeat_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_NEAREST;
__kernel void k_s_false_mirrored_repeat_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_mirrored_repeat_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_false_mirrored_repeat_linear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_LINEAR;
__kernel void k_s_false_mirrored_repeat_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_false_mirrored_repeat_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_none_nearest = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void k_s_true_none_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_none_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_none_linear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_NONE | CLK_FILTER_LINEAR;
__kernel void k_s_true_none_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_none_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_clamp_to_edge_nearest = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void k_s_true_clamp_to_edge_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_clamp_to_edge_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_clamp_to_edge_linear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR;
__kernel void k_s_true_clamp_to_edge_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_clamp_to_edge_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_clamp_nearest = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void k_s_true_clamp_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_clamp_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_clamp_linear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR;
__kernel void k_s_true_clamp_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_clamp_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_repeat_nearest = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST;
__kernel void k_s_true_repeat_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_repeat_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_repeat_linear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
__kernel void k_s_true_repeat_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_repeat_linear, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_mirrored_repeat_nearest = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_NEAREST;
__kernel void k_s_true_mirrored_repeat_nearest(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_mirrored_repeat_nearest, (float2)(0.5f, 0.5f)); }
__constant sampler_t s_true_mirrored_repeat_linear = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_LINEAR;
__kernel void k_s_true_mirrored_repeat_linear(__read_only image2d_t a, __global float4 *o) { o[0] = read_imagef(a, s_true_mirrored_repeat_linear, (float2)(0.5f, 0.5f)); }
