package corpus

import "github.com/dgen-go/dgen/rt"

//dgen:global
var DgenScale rt.DeviceGlobal[float32]

//dgen:global
var DgenBias rt.DeviceGlobal[float32]

//dgen:kernel program=P0 name=dgen_probe
type C0_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w0.cl" options=""
var P0 rt.Program

//dgen:kernel program=P0 name=compute_char_v1
type C0_K_compute_char_v1 struct {
	F_ptr rt.Buffer[int8]
	F__A int8
}

//dgen:kernel program=P0 name=compute_char_v2
type C0_K_compute_char_v2 struct {
	F_ptr rt.Buffer[int8]
	F__A int8
}

//dgen:kernel program=P0 name=compute_char_v4
type C0_K_compute_char_v4 struct {
	F_ptr rt.Buffer[int8]
	F__A int8
}

//dgen:kernel program=P0 name=compute_char_v8
type C0_K_compute_char_v8 struct {
	F_ptr rt.Buffer[int8]
	F__A int8
}

//dgen:kernel program=P0 name=compute_char_v16
type C0_K_compute_char_v16 struct {
	F_ptr rt.Buffer[int8]
	F__A int8
}

//dgen:kernel program=P1 name=dgen_probe
type C1_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w1.cl" options=""
var P1 rt.Program

//dgen:kernel program=P1 name=compute_dp_v1
type C1_K_compute_dp_v1 struct {
	F_ptr rt.Buffer[float64]
	F__A float64
}

//dgen:kernel program=P1 name=compute_dp_v2
type C1_K_compute_dp_v2 struct {
	F_ptr rt.Buffer[float64]
	F__A float64
}

//dgen:kernel program=P1 name=compute_dp_v4
type C1_K_compute_dp_v4 struct {
	F_ptr rt.Buffer[float64]
	F__A float64
}

//dgen:kernel program=P1 name=compute_dp_v8
type C1_K_compute_dp_v8 struct {
	F_ptr rt.Buffer[float64]
	F__A float64
}

//dgen:kernel program=P1 name=compute_dp_v16
type C1_K_compute_dp_v16 struct {
	F_ptr rt.Buffer[float64]
	F__A float64
}

//dgen:kernel program=P2 name=dgen_probe
type C2_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w2.cl" options=""
var P2 rt.Program

//dgen:kernel program=P3 name=dgen_probe
type C3_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w3.cl" options=""
var P3 rt.Program

//dgen:kernel program=P3 name=compute_intfast_v1
type C3_K_compute_intfast_v1 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P3 name=compute_intfast_v2
type C3_K_compute_intfast_v2 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P3 name=compute_intfast_v4
type C3_K_compute_intfast_v4 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P3 name=compute_intfast_v8
type C3_K_compute_intfast_v8 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P3 name=compute_intfast_v16
type C3_K_compute_intfast_v16 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P4 name=dgen_probe
type C4_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w4.cl" options=""
var P4 rt.Program

//dgen:kernel program=P5 name=dgen_probe
type C5_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w5.cl" options=""
var P5 rt.Program

//dgen:kernel program=P5 name=compute_integer_v1
type C5_K_compute_integer_v1 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P5 name=compute_integer_v2
type C5_K_compute_integer_v2 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P5 name=compute_integer_v4
type C5_K_compute_integer_v4 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P5 name=compute_integer_v8
type C5_K_compute_integer_v8 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P5 name=compute_integer_v16
type C5_K_compute_integer_v16 struct {
	F_ptr rt.Buffer[int32]
	F__A int32
}

//dgen:kernel program=P6 name=dgen_probe
type C6_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w6.cl" options=""
var P6 rt.Program

//dgen:kernel program=P7 name=dgen_probe
type C7_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w7.cl" options=""
var P7 rt.Program

//dgen:kernel program=P7 name=compute_short_v1
type C7_K_compute_short_v1 struct {
	F_ptr rt.Buffer[int16]
	F__A int16
}

//dgen:kernel program=P7 name=compute_short_v2
type C7_K_compute_short_v2 struct {
	F_ptr rt.Buffer[int16]
	F__A int16
}

//dgen:kernel program=P7 name=compute_short_v4
type C7_K_compute_short_v4 struct {
	F_ptr rt.Buffer[int16]
	F__A int16
}

//dgen:kernel program=P7 name=compute_short_v8
type C7_K_compute_short_v8 struct {
	F_ptr rt.Buffer[int16]
	F__A int16
}

//dgen:kernel program=P7 name=compute_short_v16
type C7_K_compute_short_v16 struct {
	F_ptr rt.Buffer[int16]
	F__A int16
}

//dgen:kernel program=P8 name=dgen_probe
type C8_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w8.cl" options=""
var P8 rt.Program

//dgen:kernel program=P8 name=compute_sp_v1
type C8_K_compute_sp_v1 struct {
	F_ptr rt.Buffer[float32]
	F__A float32
}

//dgen:kernel program=P8 name=compute_sp_v2
type C8_K_compute_sp_v2 struct {
	F_ptr rt.Buffer[float32]
	F__A float32
}

//dgen:kernel program=P8 name=compute_sp_v4
type C8_K_compute_sp_v4 struct {
	F_ptr rt.Buffer[float32]
	F__A float32
}

//dgen:kernel program=P8 name=compute_sp_v8
type C8_K_compute_sp_v8 struct {
	F_ptr rt.Buffer[float32]
	F__A float32
}

//dgen:kernel program=P8 name=compute_sp_v16
type C8_K_compute_sp_v16 struct {
	F_ptr rt.Buffer[float32]
	F__A float32
}

//dgen:kernel program=P9 name=dgen_probe
type C9_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w9.cl" options=""
var P9 rt.Program

//dgen:kernel program=P9 name=global_bandwidth_v1_local_offset
type C9_K_global_bandwidth_v1_local_offset struct {
	F_A rt.Buffer[float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v2_local_offset
type C9_K_global_bandwidth_v2_local_offset struct {
	F_A rt.Buffer[[2]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v4_local_offset
type C9_K_global_bandwidth_v4_local_offset struct {
	F_A rt.Buffer[[4]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v8_local_offset
type C9_K_global_bandwidth_v8_local_offset struct {
	F_A rt.Buffer[[8]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v16_local_offset
type C9_K_global_bandwidth_v16_local_offset struct {
	F_A rt.Buffer[[16]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v1_global_offset
type C9_K_global_bandwidth_v1_global_offset struct {
	F_A rt.Buffer[float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v2_global_offset
type C9_K_global_bandwidth_v2_global_offset struct {
	F_A rt.Buffer[[2]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v4_global_offset
type C9_K_global_bandwidth_v4_global_offset struct {
	F_A rt.Buffer[[4]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v8_global_offset
type C9_K_global_bandwidth_v8_global_offset struct {
	F_A rt.Buffer[[8]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P9 name=global_bandwidth_v16_global_offset
type C9_K_global_bandwidth_v16_global_offset struct {
	F_A rt.Buffer[[16]float32]
	F_B rt.Buffer[float32]
}

//dgen:kernel program=P10 name=dgen_probe
type C10_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w10.cl" options=""
var P10 rt.Program

//dgen:kernel program=P11 name=dgen_probe
type C11_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w11.cl" options=""
var P11 rt.Program

//dgen:kernel program=P11 name=local_bandwidth_v1
type C11_K_local_bandwidth_v1 struct {
	F_output rt.Buffer[float32]
	F_scratch rt.Local[float32]
}

//dgen:kernel program=P11 name=local_bandwidth_v2
type C11_K_local_bandwidth_v2 struct {
	F_output rt.Buffer[float32]
	F_scratch rt.Local[[2]float32]
}

//dgen:kernel program=P11 name=local_bandwidth_v4
type C11_K_local_bandwidth_v4 struct {
	F_output rt.Buffer[float32]
	F_scratch rt.Local[[4]float32]
}

//dgen:kernel program=P11 name=local_bandwidth_v8
type C11_K_local_bandwidth_v8 struct {
	F_output rt.Buffer[float32]
	F_scratch rt.Local[[8]float32]
}

//dgen:kernel program=P12 name=dgen_probe
type C12_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w12.cl" options=""
var P12 rt.Program

//dgen:kernel program=P12 name=EachPixel
type C12_K_EachPixel struct {
	F_zImage rt.Buffer[float32]
	F_fImage rt.Buffer[float32]
	F_Mass float32
	F_InternalRadius float32
	F_ExternalRadius float32
	F_Angle float32
	F_Line int32
}

//dgen:kernel program=P12 name=Pixel
type C12_K_Pixel struct {
	F_zImage rt.Buffer[float32]
	F_fImage rt.Buffer[float32]
	F_Trajectories rt.Buffer[float32]
	F_IdLast rt.Buffer[int32]
	F_ImpactParameter uint32
	F_Mass float32
	F_InternalRadius float32
	F_ExternalRadius float32
	F_Angle float32
	F_Line int32
}

//dgen:kernel program=P12 name=Circle
type C12_K_Circle struct {
	F_Trajectories rt.Buffer[float32]
	F_IdLast rt.Buffer[int32]
	F_zImage rt.Buffer[float32]
	F_fImage rt.Buffer[float32]
	F_Mass float32
	F_InternalRadius float32
	F_ExternalRadius float32
	F_Angle float32
	F_Line int32
}

//dgen:kernel program=P12 name=Trajectory
type C12_K_Trajectory struct {
	F_Trajectories rt.Buffer[float32]
	F_IdLast rt.Buffer[int32]
	F_Mass float32
	F_InternalRadius float32
	F_ExternalRadius float32
	F_Angle float32
	F_Line int32
}

//dgen:kernel program=P12 name=EachCircle
type C12_K_EachCircle struct {
	F_zImage rt.Buffer[float32]
	F_fImage rt.Buffer[float32]
	F_Mass float32
	F_InternalRadius float32
	F_ExternalRadius float32
	F_Angle float32
	F_Line int32
}

//dgen:kernel program=P12 name=Original
type C12_K_Original struct {
	F_zImage rt.Buffer[float32]
	F_fImage rt.Buffer[float32]
	F_Size uint32
	F_Mass float32
	F_InternalRadius float32
	F_ExternalRadius float32
	F_Angle float32
	F_Line int32
}

//dgen:kernel program=P13 name=dgen_probe
type C13_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w13.cl" options=""
var P13 rt.Program

//dgen:kernel program=P13 name=sum
type C13_K_sum struct {
	F_a rt.Buffer[float32]
	F_b rt.Buffer[float32]
	F_c rt.Buffer[float32]
}

//dgen:kernel program=P14 name=dgen_probe
type C14_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w14.cl" options=""
var P14 rt.Program

//dgen:kernel program=P14 name=sum
type C14_K_sum struct {
	F_a_g rt.Buffer[float32]
	F_b_g rt.Buffer[float32]
	F_res_g rt.Buffer[float32]
}

//dgen:kernel program=P15 name=dgen_probe
type C15_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w15.cl" options=""
var P15 rt.Program

//dgen:kernel program=P15 name=mandelbrot
type C15_K_mandelbrot struct {
	F_q rt.Buffer[[2]float32]
	F_output rt.Buffer[uint16]
	F_maxiter uint16
}

//dgen:kernel program=P16 name=dgen_probe
type C16_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w16.cl" options=""
var P16 rt.Program

//dgen:kernel program=P16 name=generate_sin
type C16_K_generate_sin struct {
	F_a rt.Buffer[[2]float32]
}

//dgen:kernel program=P17 name=dgen_probe
type C17_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w17.cl" options=""
var P17 rt.Program

//dgen:kernel program=P17 name=particle_fountain
type C17_K_particle_fountain struct {
	F_position rt.Buffer[[4]float32]
	F_color rt.Buffer[[4]float32]
	F_velocity rt.Buffer[[4]float32]
	F_start_position rt.Buffer[[4]float32]
	F_start_velocity rt.Buffer[[4]float32]
	F_time_step float32
}

//dgen:kernel program=P18 name=dgen_probe
type C18_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w18.cl" options=""
var P18 rt.Program

//dgen:kernel program=P18 name=reduce_sum
type C18_K_reduce_sum struct {
	F_in rt.Buffer[int32]
	F_reduce rt.Buffer[int32]
	F_buffer rt.Local[int32]
}

//dgen:kernel program=P19 name=dgen_probe
type C19_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w19.cl" options=""
var P19 rt.Program

//dgen:kernel program=P19 name=medianFilter
type C19_K_medianFilter struct {
	F_img rt.Buffer[float32]
	F_result rt.Buffer[float32]
	F_width rt.Buffer[int32]
	F_height rt.Buffer[int32]
}

//dgen:kernel program=P20 name=dgen_probe
type C20_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w20.cl" options=""
var P20 rt.Program

//dgen:kernel program=P20 name=InBallSplutterPoints
type C20_K_InBallSplutterPoints struct {
	F_clDataX rt.Buffer[[4]float32]
	F_diameter float32
	F_seed_z uint32
	F_seed_w uint32
}

//dgen:kernel program=P20 name=InBoxSplutterPoints
type C20_K_InBoxSplutterPoints struct {
	F_clDataX rt.Buffer[[4]float32]
	F_box float32
	F_seed_z uint32
	F_seed_w uint32
}

//dgen:kernel program=P20 name=SplutterStress
type C20_K_SplutterStress struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clDataV rt.Buffer[[4]float32]
	F_clCoM rt.Buffer[[4]float32]
	F_velocity float32
	F_seed_z uint32
	F_seed_w uint32
}

//dgen:kernel program=P20 name=RungeKutta
type C20_K_RungeKutta struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clDataV rt.Buffer[[4]float32]
	F_h float32
}

//dgen:kernel program=P20 name=Heun
type C20_K_Heun struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clDataV rt.Buffer[[4]float32]
	F_h float32
}

//dgen:kernel program=P20 name=ImplicitEuler
type C20_K_ImplicitEuler struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clDataV rt.Buffer[[4]float32]
	F_h float32
}

//dgen:kernel program=P20 name=ExplicitEuler
type C20_K_ExplicitEuler struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clDataV rt.Buffer[[4]float32]
	F_h float32
}

//dgen:kernel program=P20 name=CoMPotential
type C20_K_CoMPotential struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clCoM rt.Buffer[[4]float32]
	F_clPotential rt.Buffer[float32]
}

//dgen:kernel program=P20 name=Potential
type C20_K_Potential struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clPotential rt.Buffer[float32]
}

//dgen:kernel program=P20 name=CenterOfMass
type C20_K_CenterOfMass struct {
	F_clDataX rt.Buffer[[4]float32]
	F_clCoM rt.Buffer[[4]float32]
	F_Size int32
}

//dgen:kernel program=P20 name=Kinetic
type C20_K_Kinetic struct {
	F_clDataV rt.Buffer[[4]float32]
	F_clKinetic rt.Buffer[float32]
}

//dgen:kernel program=P21 name=dgen_probe
type C21_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w21.cl" options=""
var P21 rt.Program

//dgen:kernel program=P21 name=demo
type C21_K_demo struct {
	F_demo rt.Buffer[uint32]
}

//dgen:kernel program=P22 name=dgen_probe
type C22_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w22.cl" options=""
var P22 rt.Program

//dgen:kernel program=P22 name=MainLoopGlobal
type C22_K_MainLoopGlobal struct {
	F_s rt.Buffer[uint64]
	F_iterations uint64
	F_seed_w uint32
	F_seed_z uint32
}

//dgen:kernel program=P22 name=MainLoopLocal
type C22_K_MainLoopLocal struct {
	F_s rt.Buffer[uint64]
	F_iterations uint64
	F_seed_w uint32
	F_seed_z uint32
}

//dgen:kernel program=P22 name=MainLoopHybrid
type C22_K_MainLoopHybrid struct {
	F_s rt.Buffer[uint64]
	F_iterations uint64
	F_seed_w uint32
	F_seed_z uint32
}

//dgen:kernel program=P23 name=dgen_probe
type C23_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w23.cl" options=""
var P23 rt.Program

//dgen:kernel program=P23 name=twice
type C23_K_twice struct {
	F_a_g rt.Buffer[float32]
}

//dgen:kernel program=P24 name=dgen_probe
type C24_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w24.cl" options=""
var P24 rt.Program

//dgen:kernel program=P24 name=transpose
type C24_K_transpose struct {
	F_a_t rt.Buffer[float32]
	F_a rt.Buffer[float32]
	F_a_width uint32
	F_a_height uint32
	F_a_local rt.Local[float32]
}

//dgen:kernel program=P25 name=dgen_probe
type C25_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w25.cl" options=""
var P25 rt.Program

//dgen:kernel program=P25 name=transpose
type C25_K_transpose struct {
	F_a_t rt.Buffer[float32]
	F_a rt.Buffer[float32]
	F_a_width uint32
	F_a_height uint32
}

//dgen:kernel program=P26 name=dgen_probe
type C26_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w26.cl" options="-DDEFAULT_ORDER_2=256"
var P26 rt.Program

type C26_knode struct {
	F_location int32
	F_indices [257]int32
	F_keys [257]int32
	F_is_leaf bool
	F_num_keys int32
}

//dgen:kernel program=P27 name=dgen_probe
type C27_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w27.cl" options="-DDEFAULT_ORDER=256"
var P27 rt.Program

type C27_knode struct {
	F_location int32
	F_indices [257]int32
	F_keys [257]int32
	F_is_leaf bool
	F_num_keys int32
}

type C27_record struct {
	F_value int32
}

//dgen:kernel program=P28 name=dgen_probe
type C28_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w28.cl" options=""
var P28 rt.Program

//dgen:kernel program=P28 name=bpnn_layerforward_ocl
type C28_K_bpnn_layerforward_ocl struct {
	F_input_cuda rt.Buffer[float32]
	F_output_hidden_cuda rt.Buffer[float32]
	F_input_hidden_cuda rt.Buffer[float32]
	F_hidden_partial_sum rt.Buffer[float32]
	F_input_node rt.Local[float32]
	F_weight_matrix rt.Local[float32]
	F_in int32
	F_hid int32
}

//dgen:kernel program=P28 name=bpnn_adjust_weights_ocl
type C28_K_bpnn_adjust_weights_ocl struct {
	F_delta rt.Buffer[float32]
	F_hid int32
	F_ly rt.Buffer[float32]
	F_in int32
	F_w rt.Buffer[float32]
	F_oldw rt.Buffer[float32]
}

//dgen:kernel program=P29 name=dgen_probe
type C29_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w29.cl" options=""
var P29 rt.Program

type C29_Node struct {
	F_starting int32
	F_no_of_edges int32
}

//dgen:kernel program=P29 name=BFS_1
type C29_K_BFS_1 struct {
	F_g_graph_nodes rt.Buffer[C29_Node]
	F_g_graph_edges rt.Buffer[int32]
	F_g_graph_mask rt.Buffer[int8]
	F_g_updating_graph_mask rt.Buffer[int8]
	F_g_graph_visited rt.Buffer[int8]
	F_g_cost rt.Buffer[int32]
	F_no_of_nodes int32
}

//dgen:kernel program=P29 name=BFS_2
type C29_K_BFS_2 struct {
	F_g_graph_mask rt.Buffer[int8]
	F_g_updating_graph_mask rt.Buffer[int8]
	F_g_graph_visited rt.Buffer[int8]
	F_g_over rt.Buffer[int8]
	F_no_of_nodes int32
}

//dgen:kernel program=P30 name=dgen_probe
type C30_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w30.cl" options=""
var P30 rt.Program

type C30_FLOAT3 struct {
	F_x float32
	F_y float32
	F_z float32
}

//dgen:kernel program=P30 name=memset_kernel
type C30_K_memset_kernel struct {
	F_mem_d rt.Buffer[int8]
	F_val int16
	F_ct int32
}

//dgen:kernel program=P30 name=initialize_variables
type C30_K_initialize_variables struct {
	F_variables rt.Buffer[float32]
	F_ff_variable rt.Buffer[float32]
	F_nelr int32
}

//dgen:kernel program=P30 name=compute_step_factor
type C30_K_compute_step_factor struct {
	F_variables rt.Buffer[float32]
	F_areas rt.Buffer[float32]
	F_step_factors rt.Buffer[float32]
	F_nelr int32
}

//dgen:kernel program=P30 name=compute_flux
type C30_K_compute_flux struct {
	F_elements_surrounding_elements rt.Buffer[int32]
	F_normals rt.Buffer[float32]
	F_variables rt.Buffer[float32]
	F_ff_variable rt.Buffer[float32]
	F_fluxes rt.Buffer[float32]
	F_ff_flux_contribution_density_energy rt.Buffer[C30_FLOAT3]
	F_ff_flux_contribution_momentum_x rt.Buffer[C30_FLOAT3]
	F_ff_flux_contribution_momentum_y rt.Buffer[C30_FLOAT3]
	F_ff_flux_contribution_momentum_z rt.Buffer[C30_FLOAT3]
	F_nelr int32
}

//dgen:kernel program=P30 name=time_step
type C30_K_time_step struct {
	F_j int32
	F_nelr int32
	F_old_variables rt.Buffer[float32]
	F_variables rt.Buffer[float32]
	F_step_factors rt.Buffer[float32]
	F_fluxes rt.Buffer[float32]
}

//dgen:kernel program=P31 name=dgen_probe
type C31_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w31.cl" options=""
var P31 rt.Program

//dgen:kernel program=P31 name=c_CopySrcToComponents
type C31_K_c_CopySrcToComponents struct {
	F_d_r rt.Buffer[int32]
	F_d_g rt.Buffer[int32]
	F_d_b rt.Buffer[int32]
	F_cl_d_src rt.Buffer[uint8]
	F_pixels int32
}

//dgen:kernel program=P31 name=c_CopySrcToComponent
type C31_K_c_CopySrcToComponent struct {
	F_d_c rt.Buffer[int32]
	F_cl_d_src rt.Buffer[uint8]
	F_pixels int32
}

//dgen:kernel program=P31 name=cl_fdwt53Kernel
type C31_K_cl_fdwt53Kernel struct {
	F_in rt.Buffer[int32]
	F_out rt.Buffer[int32]
	F_sx int32
	F_sy int32
	F_steps int32
	F_WIN_SIZE_X int32
	F_WIN_SIZE_Y int32
}

//dgen:kernel program=P32 name=dgen_probe
type C32_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w32.cl" options=""
var P32 rt.Program

//dgen:kernel program=P32 name=Fan1
type C32_K_Fan1 struct {
	F_m_dev rt.Buffer[float32]
	F_a_dev rt.Buffer[float32]
	F_b_dev rt.Buffer[float32]
	F_size int32
	F_t int32
}

//dgen:kernel program=P32 name=Fan2
type C32_K_Fan2 struct {
	F_m_dev rt.Buffer[float32]
	F_a_dev rt.Buffer[float32]
	F_b_dev rt.Buffer[float32]
	F_size int32
	F_t int32
}

//dgen:kernel program=P33 name=dgen_probe
type C33_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w33.cl" options="-I/work/wt/shared/cl-corpus/rodinia/opencl/heartwall/kernel/.."
var P33 rt.Program

type C33_params_common struct {
	F_common_change_mem int32
	F_common_mem int32
	F_unique_mem int32
	F_frames_processed int32
	F_sSize int32
	F_tSize int32
	F_maxMove int32
	F_alpha float32
	F_no_frames int32
	F_frame_rows int32
	F_frame_cols int32
	F_frame_elem int32
	F_frame_mem int32
	F_endoPoints int32
	F_endo_mem int32
	F_epiPoints int32
	F_epi_mem int32
	F_allPoints int32
	F_in_rows int32
	F_in_cols int32
	F_in_elem int32
	F_in_mem int32
	F_in_pointer_mem int32
	F_in2_rows int32
	F_in2_cols int32
	F_in2_elem int32
	F_in2_mem int32
	F_conv_rows int32
	F_conv_cols int32
	F_conv_elem int32
	F_conv_mem int32
	F_ioffset int32
	F_joffset int32
	F_in2_pad_add_rows int32
	F_in2_pad_add_cols int32
	F_in2_pad_cumv_rows int32
	F_in2_pad_cumv_cols int32
	F_in2_pad_cumv_elem int32
	F_in2_pad_cumv_mem int32
	F_in2_pad_cumv_sel_rows int32
	F_in2_pad_cumv_sel_cols int32
	F_in2_pad_cumv_sel_elem int32
	F_in2_pad_cumv_sel_mem int32
	F_in2_pad_cumv_sel_rowlow int32
	F_in2_pad_cumv_sel_rowhig int32
	F_in2_pad_cumv_sel_collow int32
	F_in2_pad_cumv_sel_colhig int32
	F_in2_pad_cumv_sel2_rowlow int32
	F_in2_pad_cumv_sel2_rowhig int32
	F_in2_pad_cumv_sel2_collow int32
	F_in2_pad_cumv_sel2_colhig int32
	F_in2_sub_cumh_rows int32
	F_in2_sub_cumh_cols int32
	F_in2_sub_cumh_elem int32
	F_in2_sub_cumh_mem int32
	F_in2_sub_cumh_sel_rows int32
	F_in2_sub_cumh_sel_cols int32
	F_in2_sub_cumh_sel_elem int32
	F_in2_sub_cumh_sel_mem int32
	F_in2_sub_cumh_sel_rowlow int32
	F_in2_sub_cumh_sel_rowhig int32
	F_in2_sub_cumh_sel_collow int32
	F_in2_sub_cumh_sel_colhig int32
	F_in2_sub_cumh_sel2_rowlow int32
	F_in2_sub_cumh_sel2_rowhig int32
	F_in2_sub_cumh_sel2_collow int32
	F_in2_sub_cumh_sel2_colhig int32
	F_in2_sub2_rows int32
	F_in2_sub2_cols int32
	F_in2_sub2_elem int32
	F_in2_sub2_mem int32
	F_in2_sqr_rows int32
	F_in2_sqr_cols int32
	F_in2_sqr_elem int32
	F_in2_sqr_mem int32
	F_in2_sqr_sub2_rows int32
	F_in2_sqr_sub2_cols int32
	F_in2_sqr_sub2_elem int32
	F_in2_sqr_sub2_mem int32
	F_in_sqr_rows int32
	F_in_sqr_cols int32
	F_in_sqr_elem int32
	F_in_sqr_mem int32
	F_tMask_rows int32
	F_tMask_cols int32
	F_tMask_elem int32
	F_tMask_mem int32
	F_mask_rows int32
	F_mask_cols int32
	F_mask_elem int32
	F_mask_mem int32
	F_mask_conv_rows int32
	F_mask_conv_cols int32
	F_mask_conv_elem int32
	F_mask_conv_mem int32
	F_mask_conv_ioffset int32
	F_mask_conv_joffset int32
}

//dgen:kernel program=P33 name=kernel_gpu_opencl
type C33_K_kernel_gpu_opencl struct {
	F_d_common C33_params_common
	F_d_frame rt.Buffer[float32]
	F_d_frame_no int32
	F_d_endoRow rt.Buffer[int32]
	F_d_endoCol rt.Buffer[int32]
	F_d_tEndoRowLoc rt.Buffer[int32]
	F_d_tEndoColLoc rt.Buffer[int32]
	F_d_epiRow rt.Buffer[int32]
	F_d_epiCol rt.Buffer[int32]
	F_d_tEpiRowLoc rt.Buffer[int32]
	F_d_tEpiColLoc rt.Buffer[int32]
	F_d_endoT rt.Buffer[float32]
	F_d_epiT rt.Buffer[float32]
	F_d_in2_all rt.Buffer[float32]
	F_d_conv_all rt.Buffer[float32]
	F_d_in2_pad_cumv_all rt.Buffer[float32]
	F_d_in2_pad_cumv_sel_all rt.Buffer[float32]
	F_d_in2_sub_cumh_all rt.Buffer[float32]
	F_d_in2_sub_cumh_sel_all rt.Buffer[float32]
	F_d_in2_sub2_all rt.Buffer[float32]
	F_d_in2_sqr_all rt.Buffer[float32]
	F_d_in2_sqr_sub2_all rt.Buffer[float32]
	F_d_in_sqr_all rt.Buffer[float32]
	F_d_tMask_all rt.Buffer[float32]
	F_d_mask_conv_all rt.Buffer[float32]
	F_d_in_mod_temp_all rt.Buffer[float32]
	F_in_partial_sum_all rt.Buffer[float32]
	F_in_sqr_partial_sum_all rt.Buffer[float32]
	F_par_max_val_all rt.Buffer[float32]
	F_par_max_coo_all rt.Buffer[int32]
	F_in_final_sum_all rt.Buffer[float32]
	F_in_sqr_final_sum_all rt.Buffer[float32]
	F_denomT_all rt.Buffer[float32]
	F_checksum rt.Buffer[float32]
}

//dgen:kernel program=P34 name=dgen_probe
type C34_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w34.cl" options=""
var P34 rt.Program

//dgen:kernel program=P34 name=hotspotOpt1
type C34_K_hotspotOpt1 struct {
	F_p rt.Buffer[float32]
	F_tIn rt.Buffer[float32]
	F_tOut rt.Buffer[float32]
	F_sdc float32
	F_nx int32
	F_ny int32
	F_nz int32
	F_ce float32
	F_cw float32
	F_cn float32
	F_cs float32
	F_ct float32
	F_cb float32
	F_cc float32
}

//dgen:kernel program=P35 name=dgen_probe
type C35_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w35.cl" options="-DBLOCK_SIZE=16"
var P35 rt.Program

//dgen:kernel program=P35 name=hotspot
type C35_K_hotspot struct {
	F_iteration int32
	F_power rt.Buffer[float32]
	F_temp_src rt.Buffer[float32]
	F_temp_dst rt.Buffer[float32]
	F_grid_cols int32
	F_grid_rows int32
	F_border_cols int32
	F_border_rows int32
	F_Cap float32
	F_Rx float32
	F_Ry float32
	F_Rz float32
	F_step float32
}

//dgen:kernel program=P36 name=dgen_probe
type C36_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w36.cl" options=""
var P36 rt.Program

//dgen:kernel program=P36 name=bucketcount
type C36_K_bucketcount struct {
	F_input rt.Buffer[float32]
	F_indice rt.Buffer[int32]
	F_d_prefixoffsets rt.Buffer[uint32]
	F_size int32
	F_l_pivotpoints rt.Buffer[float32]
}

//dgen:kernel program=P36 name=bucketprefixoffset
type C36_K_bucketprefixoffset struct {
	F_d_prefixoffsets rt.Buffer[uint32]
	F_d_offsets rt.Buffer[uint32]
	F_blocks int32
}

//dgen:kernel program=P36 name=bucketsort
type C36_K_bucketsort struct {
	F_input rt.Buffer[float32]
	F_indice rt.Buffer[int32]
	F_output rt.Buffer[float32]
	F_size int32
	F_d_prefixoffsets rt.Buffer[uint32]
	F_l_offsets rt.Buffer[uint32]
}

//dgen:kernel program=P37 name=dgen_probe
type C37_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w37.cl" options=""
var P37 rt.Program

//dgen:kernel program=P37 name=histogram1024Kernel
type C37_K_histogram1024Kernel struct {
	F_d_Result rt.Buffer[uint32]
	F_d_Data rt.Buffer[float32]
	F_minimum float32
	F_maximum float32
	F_dataCount uint32
}

//dgen:kernel program=P38 name=dgen_probe
type C38_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w38.cl" options=""
var P38 rt.Program

//dgen:kernel program=P38 name=mergeSortFirst
type C38_K_mergeSortFirst struct {
	F_input rt.Buffer[[4]float32]
	F_result rt.Buffer[[4]float32]
	F_listsize int32
}

//dgen:kernel program=P38 name=mergeSortPass
type C38_K_mergeSortPass struct {
	F_input rt.Buffer[[4]float32]
	F_result rt.Buffer[[4]float32]
	F_nrElems int32
	F_threadsPerDiv int32
	F_constStartAddr rt.Buffer[int32]
}

//dgen:kernel program=P38 name=mergepack
type C38_K_mergepack struct {
	F_orig rt.Buffer[float32]
	F_result rt.Buffer[float32]
	F_constStartAddr rt.Buffer[int32]
	F_nullElems rt.Buffer[int32]
	F_finalStartAddr rt.Buffer[int32]
}

//dgen:kernel program=P39 name=dgen_probe
type C39_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w39.cl" options=""
var P39 rt.Program

//dgen:kernel program=P39 name=kmeans_kernel_c
type C39_K_kmeans_kernel_c struct {
	F_feature rt.Buffer[float32]
	F_clusters rt.Buffer[float32]
	F_membership rt.Buffer[int32]
	F_npoints int32
	F_nclusters int32
	F_nfeatures int32
	F_offset int32
	F_size int32
}

//dgen:kernel program=P39 name=kmeans_swap
type C39_K_kmeans_swap struct {
	F_feature rt.Buffer[float32]
	F_feature_swap rt.Buffer[float32]
	F_npoints int32
	F_nfeatures int32
}

//dgen:kernel program=P40 name=dgen_probe
type C40_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w40.cl" options=""
var P40 rt.Program

type C40_par_str struct {
	F_alpha float32
}

type C40_dim_str struct {
	F_cur_arg int32
	F_arch_arg int32
	F_cores_arg int32
	F_boxes1d_arg int32
	F_number_boxes int64
	F_box_mem int64
	F_space_elem int64
	F_space_mem int64
	F_space_mem2 int64
}

type C40_box_str struct {
	F_x int32
	F_y int32
	F_z int32
	F_number int32
	F_offset int64
	F_nn int32
	F_nei [26]C40_nei_str
}

type C40_nei_str struct {
	F_x int32
	F_y int32
	F_z int32
	F_number int32
	F_offset int64
}

type C40_FOUR_VECTOR struct {
	F_v float32
	F_x float32
	F_y float32
	F_z float32
}

//dgen:kernel program=P40 name=kernel_gpu_opencl
type C40_K_kernel_gpu_opencl struct {
	F_d_par_gpu C40_par_str
	F_d_dim_gpu C40_dim_str
	F_d_box_gpu rt.Buffer[C40_box_str]
	F_d_rv_gpu rt.Buffer[C40_FOUR_VECTOR]
	F_d_qv_gpu rt.Buffer[float32]
	F_d_fv_gpu rt.Buffer[C40_FOUR_VECTOR]
}

//dgen:kernel program=P41 name=dgen_probe
type C41_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w41.cl" options=""
var P41 rt.Program

//dgen:kernel program=P41 name=GICOV_kernel
type C41_K_GICOV_kernel struct {
	F_grad_m int32
	F_grad_x rt.Buffer[float32]
	F_grad_y rt.Buffer[float32]
	F_c_sin_angle rt.Buffer[float32]
	F_c_cos_angle rt.Buffer[float32]
	F_c_tX rt.Buffer[int32]
	F_c_tY rt.Buffer[int32]
	F_gicov rt.Buffer[float32]
	F_width int32
	F_height int32
}

//dgen:kernel program=P41 name=dilate_kernel
type C41_K_dilate_kernel struct {
	F_img_m int32
	F_img_n int32
	F_strel_m int32
	F_strel_n int32
	F_c_strel rt.Buffer[float32]
	F_img rt.Buffer[float32]
	F_dilated rt.Buffer[float32]
}

//dgen:kernel program=P42 name=dgen_probe
type C42_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w42.cl" options=""
var P42 rt.Program

//dgen:kernel program=P42 name=IMGVF_kernel
type C42_K_IMGVF_kernel struct {
	F_IMGVF_array rt.Buffer[float32]
	F_I_array rt.Buffer[float32]
	F_I_offsets rt.Buffer[int32]
	F_m_array rt.Buffer[int32]
	F_n_array rt.Buffer[int32]
	F_vx float32
	F_vy float32
	F_e float32
	F_max_iterations int32
	F_cutoff float32
}

//dgen:kernel program=P43 name=dgen_probe
type C43_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w43.cl" options=""
var P43 rt.Program

//dgen:kernel program=P43 name=IMGVF_kernel
type C43_K_IMGVF_kernel struct {
	F_IMGVF_array rt.Buffer[float32]
	F_I_array rt.Buffer[float32]
	F_I_offsets rt.Buffer[int32]
	F_m_array rt.Buffer[int32]
	F_n_array rt.Buffer[int32]
	F_vx float32
	F_vy float32
	F_e float32
	F_max_iterations int32
	F_cutoff float32
}

//dgen:kernel program=P44 name=dgen_probe
type C44_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w44.cl" options="-DBLOCK_SIZE=16"
var P44 rt.Program

//dgen:kernel program=P44 name=lud_diagonal
type C44_K_lud_diagonal struct {
	F_m rt.Buffer[float32]
	F_shadow rt.Local[float32]
	F_matrix_dim int32
	F_offset int32
}

//dgen:kernel program=P44 name=lud_perimeter
type C44_K_lud_perimeter struct {
	F_m rt.Buffer[float32]
	F_dia rt.Local[float32]
	F_peri_row rt.Local[float32]
	F_peri_col rt.Local[float32]
	F_matrix_dim int32
	F_offset int32
}

//dgen:kernel program=P44 name=lud_internal
type C44_K_lud_internal struct {
	F_m rt.Buffer[float32]
	F_peri_row rt.Local[float32]
	F_peri_col rt.Local[float32]
	F_matrix_dim int32
	F_offset int32
}

//dgen:kernel program=P45 name=dgen_probe
type C45_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w45.cl" options=""
var P45 rt.Program

//dgen:kernel program=P45 name=kernel_gpu_opencl
type C45_K_kernel_gpu_opencl struct {
	F_timeinst int32
	F_d_initvalu rt.Buffer[float32]
	F_d_finavalu rt.Buffer[float32]
	F_d_params rt.Buffer[float32]
	F_d_com rt.Buffer[float32]
}

//dgen:kernel program=P46 name=dgen_probe
type C46_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w46.cl" options=""
var P46 rt.Program

type C46_LatLong struct {
	F_lat float32
	F_lng float32
}

//dgen:kernel program=P46 name=NearestNeighbor
type C46_K_NearestNeighbor struct {
	F_d_locations rt.Buffer[C46_LatLong]
	F_d_distances rt.Buffer[float32]
	F_numRecords int32
	F_lat float32
	F_lng float32
}

//dgen:kernel program=P47 name=dgen_probe
type C47_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w47.cl" options="-DBLOCK_SIZE=16"
var P47 rt.Program

//dgen:kernel program=P47 name=nw_kernel1
type C47_K_nw_kernel1 struct {
	F_reference_d rt.Buffer[int32]
	F_input_itemsets_d rt.Buffer[int32]
	F_output_itemsets_d rt.Buffer[int32]
	F_input_itemsets_l rt.Local[int32]
	F_reference_l rt.Local[int32]
	F_cols int32
	F_penalty int32
	F_blk int32
	F_block_width int32
	F_worksize int32
	F_offset_r int32
	F_offset_c int32
}

//dgen:kernel program=P47 name=nw_kernel2
type C47_K_nw_kernel2 struct {
	F_reference_d rt.Buffer[int32]
	F_input_itemsets_d rt.Buffer[int32]
	F_output_itemsets_d rt.Buffer[int32]
	F_input_itemsets_l rt.Local[int32]
	F_reference_l rt.Local[int32]
	F_cols int32
	F_penalty int32
	F_blk int32
	F_block_width int32
	F_worksize int32
	F_offset_r int32
	F_offset_c int32
}

//dgen:kernel program=P48 name=dgen_probe
type C48_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w48.cl" options=""
var P48 rt.Program

//dgen:kernel program=P48 name=find_index_kernel
type C48_K_find_index_kernel struct {
	F_arrayX rt.Buffer[float64]
	F_arrayY rt.Buffer[float64]
	F_CDF rt.Buffer[float64]
	F_u rt.Buffer[float64]
	F_xj rt.Buffer[float64]
	F_yj rt.Buffer[float64]
	F_weights rt.Buffer[float64]
	F_Nparticles int32
}

//dgen:kernel program=P48 name=normalize_weights_kernel
type C48_K_normalize_weights_kernel struct {
	F_weights rt.Buffer[float64]
	F_Nparticles int32
	F_partial_sums rt.Buffer[float64]
	F_CDF rt.Buffer[float64]
	F_u rt.Buffer[float64]
	F_seed rt.Buffer[int32]
}

//dgen:kernel program=P48 name=sum_kernel
type C48_K_sum_kernel struct {
	F_partial_sums rt.Buffer[float64]
	F_Nparticles int32
}

//dgen:kernel program=P48 name=likelihood_kernel
type C48_K_likelihood_kernel struct {
	F_arrayX rt.Buffer[float64]
	F_arrayY rt.Buffer[float64]
	F_xj rt.Buffer[float64]
	F_yj rt.Buffer[float64]
	F_CDF rt.Buffer[float64]
	F_ind rt.Buffer[int32]
	F_objxy rt.Buffer[int32]
	F_likelihood rt.Buffer[float64]
	F_I rt.Buffer[uint8]
	F_u rt.Buffer[float64]
	F_weights rt.Buffer[float64]
	F_Nparticles int32
	F_countOnes int32
	F_max_size int32
	F_k int32
	F_IszY int32
	F_Nfr int32
	F_seed rt.Buffer[int32]
	F_partial_sums rt.Buffer[float64]
	F_buffer rt.Local[float64]
}

//dgen:kernel program=P49 name=dgen_probe
type C49_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w49.cl" options=""
var P49 rt.Program

//dgen:kernel program=P49 name=particle_kernel
type C49_K_particle_kernel struct {
	F_arrayX rt.Buffer[float64]
	F_arrayY rt.Buffer[float64]
	F_CDF rt.Buffer[float64]
	F_u rt.Buffer[float64]
	F_xj rt.Buffer[float64]
	F_yj rt.Buffer[float64]
	F_Nparticles int32
}

//dgen:kernel program=P50 name=dgen_probe
type C50_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w50.cl" options=""
var P50 rt.Program

//dgen:kernel program=P50 name=find_index_kernel
type C50_K_find_index_kernel struct {
	F_arrayX rt.Buffer[float32]
	F_arrayY rt.Buffer[float32]
	F_CDF rt.Buffer[float32]
	F_u rt.Buffer[float32]
	F_xj rt.Buffer[float32]
	F_yj rt.Buffer[float32]
	F_weights rt.Buffer[float32]
	F_Nparticles int32
}

//dgen:kernel program=P50 name=normalize_weights_kernel
type C50_K_normalize_weights_kernel struct {
	F_weights rt.Buffer[float32]
	F_Nparticles int32
	F_partial_sums rt.Buffer[float32]
	F_CDF rt.Buffer[float32]
	F_u rt.Buffer[float32]
	F_seed rt.Buffer[int32]
}

//dgen:kernel program=P50 name=sum_kernel
type C50_K_sum_kernel struct {
	F_partial_sums rt.Buffer[float32]
	F_Nparticles int32
}

//dgen:kernel program=P50 name=likelihood_kernel
type C50_K_likelihood_kernel struct {
	F_arrayX rt.Buffer[float32]
	F_arrayY rt.Buffer[float32]
	F_xj rt.Buffer[float32]
	F_yj rt.Buffer[float32]
	F_CDF rt.Buffer[float32]
	F_ind rt.Buffer[int32]
	F_objxy rt.Buffer[int32]
	F_likelihood rt.Buffer[float32]
	F_I rt.Buffer[uint8]
	F_u rt.Buffer[float32]
	F_weights rt.Buffer[float32]
	F_Nparticles int32
	F_countOnes int32
	F_max_size int32
	F_k int32
	F_IszY int32
	F_Nfr int32
	F_seed rt.Buffer[int32]
	F_partial_sums rt.Buffer[float32]
	F_buffer rt.Local[float32]
}

//dgen:kernel program=P51 name=dgen_probe
type C51_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w51.cl" options=""
var P51 rt.Program

//dgen:kernel program=P51 name=dynproc_kernel
type C51_K_dynproc_kernel struct {
	F_iteration int32
	F_gpuWall rt.Buffer[int32]
	F_gpuSrc rt.Buffer[int32]
	F_gpuResults rt.Buffer[int32]
	F_cols int32
	F_rows int32
	F_startStep int32
	F_border int32
	F_HALO int32
	F_prev rt.Local[int32]
	F_result rt.Local[int32]
	F_outputBuffer rt.Buffer[int32]
}

//dgen:kernel program=P52 name=dgen_probe
type C52_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w52.cl" options="-I/work/wt/shared/cl-corpus/rodinia/opencl/srad/kernel/.."
var P52 rt.Program

//dgen:kernel program=P52 name=extract_kernel
type C52_K_extract_kernel struct {
	F_d_Ne int64
	F_d_I rt.Buffer[float32]
}

//dgen:kernel program=P52 name=prepare_kernel
type C52_K_prepare_kernel struct {
	F_d_Ne int64
	F_d_I rt.Buffer[float32]
	F_d_sums rt.Buffer[float32]
	F_d_sums2 rt.Buffer[float32]
}

//dgen:kernel program=P52 name=reduce_kernel
type C52_K_reduce_kernel struct {
	F_d_Ne int64
	F_d_no int64
	F_d_mul int32
	F_d_sums rt.Buffer[float32]
	F_d_sums2 rt.Buffer[float32]
	F_gridDim int32
}

//dgen:kernel program=P52 name=srad_kernel
type C52_K_srad_kernel struct {
	F_d_lambda float32
	F_d_Nr int32
	F_d_Nc int32
	F_d_Ne int64
	F_d_iN rt.Buffer[int32]
	F_d_iS rt.Buffer[int32]
	F_d_jE rt.Buffer[int32]
	F_d_jW rt.Buffer[int32]
	F_d_dN rt.Buffer[float32]
	F_d_dS rt.Buffer[float32]
	F_d_dE rt.Buffer[float32]
	F_d_dW rt.Buffer[float32]
	F_d_q0sqr float32
	F_d_c rt.Buffer[float32]
	F_d_I rt.Buffer[float32]
}

//dgen:kernel program=P52 name=srad2_kernel
type C52_K_srad2_kernel struct {
	F_d_lambda float32
	F_d_Nr int32
	F_d_Nc int32
	F_d_Ne int64
	F_d_iN rt.Buffer[int32]
	F_d_iS rt.Buffer[int32]
	F_d_jE rt.Buffer[int32]
	F_d_jW rt.Buffer[int32]
	F_d_dN rt.Buffer[float32]
	F_d_dS rt.Buffer[float32]
	F_d_dE rt.Buffer[float32]
	F_d_dW rt.Buffer[float32]
	F_d_c rt.Buffer[float32]
	F_d_I rt.Buffer[float32]
}

//dgen:kernel program=P52 name=compress_kernel
type C52_K_compress_kernel struct {
	F_d_Ne int64
	F_d_I rt.Buffer[float32]
}

//dgen:kernel program=P53 name=dgen_probe
type C53_Probe struct{ Out rt.Buffer[float32] }

//dgen:program source="w53.cl" options=""
var P53 rt.Program

type C53_Point_Struct struct {
	F_weight float32
	F_assign int64
	F_cost float32
}

//dgen:kernel program=P53 name=memset_kernel
type C53_K_memset_kernel struct {
	F_mem_d rt.Buffer[int8]
	F_val int16
	F_number_bytes int32
}

//dgen:kernel program=P53 name=pgain_kernel
type C53_K_pgain_kernel struct {
	F_p rt.Buffer[C53_Point_Struct]
	F_coord_d rt.Buffer[float32]
	F_work_mem_d rt.Buffer[float32]
	F_center_table_d rt.Buffer[int32]
	F_switch_membership_d rt.Buffer[int8]
	F_coord_s rt.Local[float32]
	F_num int32
	F_dim int32
	F_x int64
	F_K int32
}

