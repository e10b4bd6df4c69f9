// Package llm lays a transformer out over GPUs for training, the way
// Megatron-LM, DeepSpeed and PyTorch FSDP do, and counts the memory each
// GPU needs, the time of its training step, and which layout is fastest.
//
// # Layouts
//
// A Layout names the tensor-parallel degree TP (with or without sequence
// parallelism), the pipeline stages PP (with v virtual stages for the
// interleaved 1F1B schedule), the data-parallel degree DP, the
// context-parallel degree CP, the expert-parallel degree EP (inside the
// DP·CP ranks), the micro-batch b and the global batch B (hence
// M = B/(b·DP) micro-batches per step), the activation recomputation
// (none, selective, full) and the sharding of the model states (ZeRO 1–3,
// FSDP full or hybrid shard, Megatron-LM's distributed optimizer). The
// world is TP·PP·DP·CP GPUs. Validate names each field that does not fit
// the shape and its valid choices.
//
// # Model states
//
// Mixed-precision Adam keeps 2 bytes of 16-bit weights, g = 2 bytes of
// gradients (4 for Megatron-LM's fp32 gradient buffer) and K = 12 bytes of
// fp32 master weights and moments per parameter (Rajbhandari et al. 2020,
// Section 3.1). A GPU holding Ψ parameters, sharded over n ranks, keeps
// (ModelStates)
//
//	none                 (2 + g + K)·Ψ
//	zero1, distopt       (2 + g)·Ψ + K·Ψ/n
//	zero2                2·Ψ + (g + K)·Ψ/n
//	zero3, fsdp, hsdp    (2 + g + K)·Ψ/n  + two gathered layers
//
// with n = DP·CP (hsdp: the ranks of one node, min(DP·CP, NodeGPUs/TP)),
// and n/EP for the experts. Ψ is a stage's share: L/PP layers whose
// matrices are split over TP (kv heads fewer than TP replicated), norms
// and row-parallel biases replicated, Experts/EP experts; the first stage
// adds the vocabulary-parallel token table V·d/TP and the position table,
// the last the output projection (a copy of the token table when tied and
// PP > 1) and the final norm.
//
// # Activations
//
// One layer keeps, per GPU and micro-batch of T = b·s/CP tokens
// (LayerActivations; Korthikanti et al. 2022, Section 4 and Table 2)
//
//	R = T·d·(8 + 2·[dropout])                       replicated over TP, ÷TP under SP
//	S = T·(2·(2·d_q + 2·d_kv) + 5·a·s + 2·mats·f)   ÷TP
//
// which for a GPT layer is s·b·h·(10 + 24/t + 5·a·s/(h·t)), and
// s·b·h/t·(34 + 5·a·s/h) under sequence parallelism. Selective
// recomputation drops the 5·a·s term; fused attention replaces it by an
// fp32 log-sum-exp per head; full recomputation keeps 2·s·b·h (÷TP under
// SP). Stage r keeps min(PP − r, M) micro-batches of its L/PP layers
// under 1F1B, and under the interleaved schedule Megatron-LM's warm-up
// chunks, which on the first stage make L·(1 + (PP − 1)/(PP·v)) layers.
// The first stage adds the embedding dropout masks, the last the final
// norm's and output projection's inputs and the fp32 logits 4·s·b·V/TP
// (Section 4.3). Recomputation adds the recomputed layer's activations
// for one micro-batch.
//
// An Allowance covers the CUDA context, workspaces and fragmentation
// (DefaultAllowance: 1 GiB and 5 %, assumptions). MaxMicroBatch finds the
// largest micro-batch that fits a GPU. docs/llm.md has the validation
// against Korthikanti et al. 2022 and the ZeRO paper.
//
// # Step time and search
//
// Layout.StepTime is an analytic model of a Megatron-LM step on a
// Hardware (GPUs per node, memory, peak, an OpTime per operator and a
// CommTime per collective): each layer's operators (TransformerShape.Ops)
// split over TP and CP and timed; the tensor-parallel all-reduces (or
// sequence parallelism's all-gathers and reduce-scatters), ring
// attention's exchange past the attention it overlaps, MoE all-to-alls
// and ZeRO-3 gathers past their prefetch; the pipeline
//
//	M·max_r c_r + (PP − 1)/v·mean_r c_r
//
// with the send/recv of one hidden state per micro-batch and boundary;
// the data-parallel reduction past the backward pass it overlaps; Adam's
// update. RooflineTime is the default operator time. Search enumerates
// GPU counts × global batches × TP × sequence parallel × CP × PP × v ×
// DP × EP × micro-batch × recomputation × sharding and returns the
// fastest layouts that fit, or with a token budget the cheapest within a
// deadline or the fastest within a budget of GPU-hours.
//
// # Time to train
//
// ScheduleTokens counts the steps to a token budget at each global batch
// of a Megatron-LM batch ramp-up; TokenSchedule.Time sums them with the
// caller's step time. ScalingLaw.Tokens estimates the tokens to a loss
// (Chinchilla's fit: an estimate). CheckpointBytes and CheckpointCostOn
// size a checkpoint and time it on the system's storage;
// PublishedInterruptions holds measured interruption rates; YoungInterval,
// DalyInterval and Waste give the best checkpoint interval and the
// goodput; TrainWallTime and EstimateTraining turn compute time into wall
// time with its breakdown. docs/llm-time.md has the equations and sources.
package llm
