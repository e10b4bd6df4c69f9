// Package netsim simulates data movement between devices as flows on the
// event core: links with bandwidth and latency, flows that share the links
// they cross, a cluster topology built from plain numbers, and the
// collectives of distributed training (all-reduce, reduce-scatter,
// all-gather, broadcast, all-to-all, send/recv), each run as real flows
// and checked against its closed form.
//
// # Links, paths and flows
//
// A Link is one direction of a channel (a NIC port, an NVLink port, a PCIe
// link, host memory, the fabric core) with a bandwidth B in bytes/s and a
// latency. A Path is a set of links with weights; a Flow moves the same
// number of bytes n on every stream of its path. A flow first waits its
// path's latency
//
//	alpha = extra + sum of the latencies of the links crossed
//
// (extra carries the per-message software overhead), then moves its bytes
// at the rate the network gives it; alone on an idle network it takes
//
//	alpha + n/beta,  beta = min over links l of B(l)/w(l)
//
// where w(l) is the number of the path's streams crossing l. A link never
// carries more than its bandwidth: the sum over moving flows of rate times
// weight stays at most B(l).
//
// # Sharing
//
// Rates are recomputed whenever a flow starts moving or finishes, and are
// constant in between, so a flow's finish time is exact:
//
//	finish = now + remaining/rate
//
// Network.Sharing selects the policy. MaxMin (the default) is max-min fair
// sharing by progressive filling: all rates rise together; when a link is
// full (to 1e-12 of its bandwidth), the flows crossing it are frozen and
// the rest keep rising. EqualShare
// gives each flow
//
//	rate(f) = min over links l of f of B(l) / (sum of weights of moving flows on l)
//
// and leaves idle any capacity a flow limited elsewhere cannot use. Under
// EqualShare a lower bandwidth never finishes any flow earlier; under MaxMin
// it can, because a flow slowed on one link frees capacity for others on
// another (TestMaxMinNotMonotone gives a case where the whole set finishes
// earlier). Both agree whenever one flow group is moving, which is every
// moment of a collective on an otherwise idle network.
//
// # Flow groups: the symmetry abstraction
//
// A collective step in which p ranks each send a message of the same size
// (a ring step, a halving-doubling exchange, a tree tick) is simulated as
// one flow whose path is the union of the p routes: a link crossed by k of
// them has weight k. All p streams move at one common rate, the group's
// rate, so a step costs two events (first byte, last byte) instead of 2p,
// and the path is built once and reused for every step with the same
// pairs. A ring all-reduce on 1024 ranks is 2046 flows and 4092 events
// instead of two million, a hierarchical one on 128 nodes of 8 is 268 flows.
//
// This is exact when every stream of the group gets the same share, which
// holds on an idle symmetric topology and whenever other traffic loads the
// group's links evenly. When other traffic loads one member's link more,
// the whole group moves at that member's rate: gang semantics. A
// synchronous step ends with its slowest stream anyway, and in the case of
// TestGangBound the group ends exactly when the slowest of the separate
// flows does and the other traffic is unaffected; what the abstraction
// loses is that the faster members do not finish early and hand their
// bandwidth to other traffic for the rest of the step. Contention between the group and other flows is real in both
// directions: the group takes k times its rate from a link of weight k, and
// progressive filling gives other flows what is left.
//
// # Time
//
// Times are units.Seconds, float64 seconds: see package event for why this
// meets a relative 1e-9 against closed forms where integer nanoseconds
// would not. Every product that feeds a sum is written float64(x*y), which
// Go never fuses into a multiply-add, so results are bit-identical across
// architectures.
//
// # Topology
//
// NewTopology builds a cluster from a Config: p ranks on p/k nodes of k,
// each device with a port into the node's peer-to-peer fabric and a PCIe
// link to host memory, each node with host memory and NICs, the NICs on a
// fabric core whose capacity is the sum of the NIC bandwidths divided by
// the oversubscription (the Topology type lists the links and routes). The
// devices of a node share its NICs (device j uses NIC j·nics/k), so four
// devices on one NIC each see a quarter of it. Config.NodeRanks places
// different numbers of ranks on the nodes (1+2+3+4: node 0 holds rank 0,
// node 1 ranks 1 and 2, and so on); a node of k ranks spreads them over
// its NICs as above.
//
// Config.DevicesPerSwitch models a node's PCIe tree: devices, in rank
// order, behind PCIe switches of DevicesPerSwitch, each switch with one
// uplink to its CPU socket (switch s of m on socket s·Sockets/m), the
// sockets joined by InterSocket links. NCCL by default uses peer-to-peer
// only under a common switch (P2P level PXB; NVIDIA/nccl
// src/graph/paths.cc) and GPUDirect RDMA only to a NIC under it, so with a
// tree a transfer between switches, or to or from a NIC not under the
// device's switch, goes up the source switch's uplink, through host memory
// (written and read, where modelled), across the inter-socket link where
// the sockets differ, and down the destination's uplink or out of the NIC.
// On one node of 4 devices behind 2 switches of 2, a ring 0,1,2,3 crosses
// each uplink once each way and a ring 0,2,1,3 twice, so with uplink U
// below the ports
//
//	T = 2(p−1)·(alpha_u + S/(p·U))   and   2(p−1)·(alpha_u + 2S/(p·U))
//
// alpha_u the port latency plus two uplink latencies (TestPCIeTreeRing).
//
// Config.NICsPerSwitch puts the NICs under the switches too (NIC i under
// switch i/NICsPerSwitch): a device reaches a NIC under its own switch by
// GPUDirect RDMA, off the uplink, and one under another switch up its
// uplink, through host memory and down that switch's. Two devices under
// one switch sending at once to another node through NICs on the root
// complex share its uplink, T = alpha + 2S/U where U binds; through one
// NIC under their switch they share the NIC, T = alpha_n + 2S/beta_n
// (TestSwitchSharedUplink). Config.IntraBypassesTree gives the devices a
// fabric of their own beside the tree (NVLink): transfers between them
// use their ports whatever their switches, and only NIC traffic takes the
// tree (TestIntraBypassesTree).
//
// Config.Rails makes the fabric rail-optimised: NIC j of every node sits
// on rail j's leaf (non-blocking: its capacity is the rail's NICs
// together, and it carries FabricLatency), and only traffic between NICs
// of different indices crosses the spine, whose capacity is the NICs'
// sum over Oversubscription. A ring whose hops between nodes join NICs of
// the same index is then unaffected by the oversubscription; one whose
// hops change rails has all its inter-node streams on the spine and is
// slowed by its ratio (TestRails). Parameter servers hang off the spine.
//
// A transport may cap each stream between nodes: Config.PerFlow is the
// most one stream moves (one TCP connection, one cloud flow) and
// Config.Streams the number a rank stripes each transfer to another node
// over, so a route between nodes moves at most Streams·PerFlow however
// idle its links (PathBuilder.AddLimited; under MaxMin a limited flow
// stops rising at its limit and leaves the rest to others). Where the
// limit binds, the closed forms below hold with beta = Streams·PerFlow:
// for k ranks sharing a NIC in Hierarchical, beta_n = min(nics·beta/k,
// Streams·PerFlow) (TestPerFlowClosedForms). The transport efficiency
// scales the NICs and the core; the per-message overhead is added to every
// message between nodes or to a server. Topology.Route returns the path of
// one point-to-point transfer (pipeline activations), and Topology.Routes
// that of a flow group of them sent at once.
//
// # Collectives
//
// Topology.AllReduce runs an all-reduce of S bytes on p ranks starting at
// the scheduler's current time, alongside any other flows, and reports its
// completion time and the bytes and busy time (bytes over bandwidth) of
// every link it used. Each step starts when the previous one has finished.
// The closed forms below hold on an idle network of one rank per node
// (alpha the latency of a message between nodes, beta the NIC bandwidth
// times the efficiency) and are what TestClosedForms checks, to 1e-9
// relative, for p from 2 to 1024 and S from 1 KiB to 1 GiB.
//
// Ring: a reduce-scatter and an all-gather, each p−1 steps of S/p around the
// ranks in the order given:
//
//	T = 2(p−1)·alpha + 2(p−1)/p · S/beta
//
// Over several nodes with c NICs each (and as many ranks on each node), c
// rings run at once, each with S/c (NCCL's channels): ring j takes each
// node's ranks in their order turned by j·k/c, so that each ring crosses
// between nodes through another NIC and the rings use them all; where the
// NICs are the bottleneck, T = 2(p−1)·alpha + 2(p−1)/p · S/(c·beta)
// (TestRingChannels).
//
// On nodes holding different numbers of the ranks the ring runs as given,
// with as many channels as the node with the fewest ranks allows (NCCL
// runs the fewest channels any rank found: NVIDIA/nccl src/init.cc). On
// an idle network its step is its slowest hop's: on 1+2+3+4 ranks with
// one NIC per node, four hops cross between nodes, one stream per NIC
// each way, and T is the ring's formula with p = 10 (TestUnevenRing).
// Tree, DoubleTree and HalvingDoubling depend on rank positions only and
// run on any placement; Hierarchical needs k ranks on every node (its
// rails are the ranks with the same place in their nodes) and refuses
// uneven nodes; HostStaged sums on each host what its k_n devices sent,
// the busiest host setting the step.
//
// HalvingDoubling (Rabenseifner): with p' = 2^⌊log2 p⌋ and r = p − p', the
// ranks 2i+1 (i < r) first send all of S to rank 2i; the p' remaining ranks
// reduce-scatter by recursive halving (step j = 0..log2 p' − 1 exchanges
// S/2^(j+1) with the rank at distance 2^j, so the large exchanges stay
// between neighbours, inside a node) and all-gather by recursive doubling;
// then ranks 2i send S back to 2i+1:
//
//	T = 2·log2(p')·alpha + 2(p'−1)/p' · S/beta + [p' < p]·2·(alpha + S/beta)
//
// Tree and DoubleTree: the binary tree is a heap over the ranks (the parent
// of position i is (i−1)/2, depth d = ⌊log2 p⌋); NCCL's double binary tree
// adds the heap over the ranks in reverse order, in which every rank
// interior to one tree is a leaf of the other, and gives each tree half of
// S. The data are pipelined in C = ⌈S_tree/TreeChunk⌉ chunks of c =
// S_tree/C (S_tree = S for the tree, S/2 for each double tree), at most
// MaxChunks. The reduce runs in n = d + C − 1 level-synchronous ticks: in
// tick τ the ranks at depth l send chunk τ − (d − l) to their parents; the
// broadcast then mirrors it. Each tick is one flow group, and a parent
// receiving from (or sending to) two children, or a rank sending up both
// trees, carries two streams, so a tick costs alpha + 2c/beta except in δ
// ticks with no such rank:
//
//	T = 2·(n·alpha + (2n − δ)·c/beta),  δ = n if p = 2, 1 if p = 2^d ≥ 4, else 0
//
// so the bandwidth term is about 2·S/beta per phase for the single tree and
// about S/beta per phase (2·S/beta in all) for the double tree, with
// 2(d + C − 1) latency terms. NCCL overlaps the broadcast with the reduce;
// this model does not, which costs d extra ticks.
//
// Hierarchical: on k ranks per node and N nodes, a ring reduce-scatter of S
// inside every node at once, an all-reduce of S/k between nodes by the k
// "rails" of ranks with the same place in their nodes (Config.InterNode,
// default Ring), and a ring all-gather inside the nodes. The k rails share
// the node's NICs, so each stream between nodes gets beta_n = nics·beta/k
// (or less, through an oversubscribed core), and with a ring between nodes
//
//	T = 2(k−1)·(alpha_i + S/(k·beta_i)) + 2(N−1)·(alpha_n + S/(k·N·beta_n))
//
// with alpha_i and beta_i the intra-node latency and port bandwidth.
//
// Torus2D (IPU-POD): the ranks form an X by Y grid, rows of X consecutive
// ranks; a ring reduce-scatter along the rows, a ring all-reduce of S/X
// along the columns and a ring all-gather along the rows:
//
//	T = 2(X−1)·(alpha + S/(X·beta)) + 2(Y−1)·(alpha + S/(X·Y·beta))
//
// ParameterServer (synchronous, k = Config.Servers shards on their own
// hosts): every worker pushes S/k to each shard, then pulls S/k from each;
// each server's link carries p·S/k each way and each worker's k·S/k = S, and
// every message pays the RPC overhead in alpha:
//
//	T = 2·(alpha + (S/k) / min(beta/k, beta_server/p))
//
// HostStaged, for devices without peer-to-peer access (seed 003's two GPUs):
// every device copies S to host memory over its PCIe link; each host with
// k ≥ 2 devices sums them on the CPU, reading k·S and writing S of host
// memory; with N ≥ 2 nodes the hosts run a ring all-reduce of S striped
// over their NICs; every device copies S back. With PCIe bandwidth B_p and
// latency alpha_p and host memory bandwidth B_m (shared by the k copies):
//
//	T = 2·(alpha_p + S/min(B_p, B_m/k)) + [k ≥ 2]·(k+1)·S/B_m + [N ≥ 2]·T_ring(N, S)
//
// where the host ring's streams get min(beta, B_m/(2·nics)) each.
//
// Without peer-to-peer, the other algorithms send between two devices of
// a node through host memory, up one PCIe link and down the other; with
// Config.SHM each such send also crosses its sender's shm-out and its
// receiver's shm-in link of that rate (NCCL's shared-memory transport),
// so a ring inside a node of p devices with SHM below the PCIe links and
// host memory's share costs 2(p−1)·(2α_p + S/(p·SHM))
// (TestSharedMemoryRate); copies to and from the NICs keep PCIe's rate.
//
// # Other collectives
//
// Topology.ReduceScatter, AllGather, Broadcast, AllToAll and SendRecv run
// the other collectives the same way, their Result's Op naming which; each
// method's documentation gives its schedule. On the same idle network of
// one rank per node, S the full buffer (each rank ending with, or starting
// from, S/p for reduce-scatter and all-gather; sending S/p to each other
// rank for all-to-all), and C = ⌈S/TreeChunk⌉ pipeline chunks (at most
// MaxChunks) of c = S/C for broadcast, TestCollectivesClosedForms checks to
// 1e-9 relative, for p from 2 to 8:
//
//	reduce-scatter, all-gather, ring:   T = (p−1)·(alpha + S/(p·beta))
//	  halving-doubling (p = 2^m):       T = log2(p)·alpha + (p−1)/p · S/beta
//	broadcast, ring (a chain from the root):
//	                                    T = (C+p−2)·(alpha + c/beta)
//	  tree (the root at the heap's top): T = n·alpha + (2n − δ)·c/beta
//	                                    (n, δ as for Tree above)
//	all-to-all (all pairs at once):     T = alpha + (p−1)/p · S/beta
//	send/recv:                          T = alpha + S/beta
//
// A ring reduce-scatter then a ring all-gather is the ring all-reduce, in
// closed form and in the simulator (TestReduceScatterAllGatherIsAllReduce).
// Ranks sharing a NIC share its bandwidth: all-to-all over nodes of k
// ranks on one NIC has each NIC carry k(p−k) streams instead of p−1, and
// two send/recvs through one NIC take alpha + 2S/beta each
// (TestSharedNICContention).
//
// # NCCL
//
// Algorithm NCCL (and Topology.Collective with it, for every op) runs each
// call as NCCL does: NCCLChoose picks the algorithm and protocol by NCCL's
// tuning model (NVIDIA/nccl v2.30.7, src/graph/tuning.cc), and the pair
// runs as flows. For op, S bytes, p ranks on N nodes of k and c channels
// between nodes (min(NICs, k)), NCCL's graph search (src/graph/search.cc)
// gives the ring a bus bandwidth B_r = min(port, c·NIC) across nodes (a
// ring graph's bwIntra is its bwInter) and the tree B_t = min(port,
// 2c·NIC) on two nodes (its second pass raises a tree's bwIntra up to
// twice bwInter: a tree between two nodes moves S, not 2(p−1)/p·S,
// through each node's NICs), min(port, c·NIC) beyond; on one node both are
// the port's, with one rank a node the NICs'. Each enabled pair (a, P) is
// predicted
//
//	T(a, P) = L(a, P) + S/B_alg(a, P)
//
// and the least is taken (ties to the first tried: tree, ring, CollNet,
// NVLS, NVLS tree; LL, LL128, Simple). With h_X(a, P) tuning.cc's hwLatencies of link
// class X (NVLink, PCI, network), base(a, P) its baseLatencies and l the
// network's own latency (the NIC's, the fabric's and the transport's per
// message, which NCCL takes from its net plugin as the graph's
// latencyInter and adds once more for Simple's flush), a hop between nodes
// costs h_net' = h_net + l·(2 for Simple, else 1) (h_net the tree's when
// k = 1):
//
//	ring:    L = base + (n − n_net)·max(h_intra, o) + n_net·h_net',
//	         n = 2(p−1) all-reduce, p−1 reduce-scatter and all-gather,
//	         n_net = 2(N−1) or N−1 (0 on one node), o = 1 µs (3 µs Simple)
//	         between nodes; × 1.4 for a Simple all-reduce between nodes
//	         with S/(c·p) ≥ 64;
//	         B_alg = f_P·B_r·p/n, f = 0.5, 0.92, 1 for LL, LL128, Simple
//	         (broadcast: L = base + one hop, B_alg = f_P·B_r)
//	tree:    L = base + 2·((k−1)·h_intra + ⌊log2 N⌋·h_net'),
//	         B_alg = 0.92·B_t·g_P/2 · corr(P, ⌊log2(S/64)⌋),
//	         g = 1/3.8, 7/9 (one node) or 120/128, 1
//	NVLS:    L = 25 µs, B_alg = k·b·p/(2(p−1)) (one node),
//	         b = min(2·0.85·s_i·(k−1)/k, s_o)
//	NVLS tree: L = 25 µs + 2·⌊log2 N⌋·h_net', h_net = 20.9 µs (Simple),
//	         B_alg = k·b·p/(2(p−1)), b = min(2·0.85·s_i·(k−1)/k, m·s_n, b_max)
//	CollNet: L = 2·(3.7 + 0.4·(k−1)) µs + 31 µs + 2l (14 µs + 2l if k = 1),
//	         B_alg = B_intra/(r − (r−1)/2)/2, r = k/c
//
// NVLS's and the NVLS tree's b is tuning.cc's bus bandwidth of one channel
// of NCCL's NVLS graph, which has one channel a GPU (its heads, each with
// its NIC): s_i is the fastest of search.cc's sm90 intra speeds (60, 50,
// 40, 30, 24, 20, 15, ... GB/s) not above port/(k+1) (a head's port
// carries its channel twice, every other port once); on one node s_o the
// slowest of them at least 2·s_i, else 60 (search.cc raises the graph's
// bwInter, unchecked there, while it is under twice bwIntra); on an
// H100 node (port 360 GB/s) b = min(59.5, 60), B = 476 GB/s of bus
// bandwidth. Between nodes s_n is the fastest sm90 inter speed
// (48, 45, 42, 40, 30, 24, 22, 20, ... GB/s) not above a NIC's rate, m = 2
// and b_max = 57.7 GB/s on two nodes (perChMaxNVLSTreeBw, Hopper), m = 1
// and 45.5 GB/s on more.
//
// Tree is the all-reduce's alone; NVLS needs Config.NCCL.NVLS and one node
// of NVLink, the NVLS tree NVLS and several nodes holding as many of the
// ranks, CollNet Config.NCCL.CollNet and several nodes; LL128 is on by
// default only over NVLink. NCCLConfig.NetProtocols, the protocols the
// transport between nodes lets NCCL run (aws-ofi-nccl sets
// NCCL_PROTO=simple where EFA does not deliver 128-byte lines in order),
// are those the calls across nodes choose among, LL128 included beyond
// NVLink as NCCL_PROTO enables what it lists, unless Protocol fixes one
// (the plugin leaves a user's NCCL_PROTO alone). All-to-all and send/recv are point-to-point: LL
// when each peer gets at most 16 KiB (enqueue.cc's NCCL_P2P_LL_THRESHOLD),
// else Simple. NCCLConfig.Algorithm and Protocol fix the choice, as
// NCCL_ALGO and NCCL_PROTO do; a pair the request cannot run is an error.
//
// As flows, the ring's steps pay the protocol's hop latency in place of
// their links' latencies, the base latency is paid once, and the payload
// moves times the wire factor w (2 for LL, 128/120 for LL128, 1 for
// Simple). On an idle network (β the bandwidth a stream gets):
//
//	ring all-reduce:     T = base + n·h̄ + n/p·S·w/β,  h̄ = L_hops/n
//	ring broadcast:      T = base + (C+p−2)·(h + c·w/β), a chain of C chunks
//	NVLS, NVLS tree:     T = L + S/B_alg
//	CollNet:             T = L + 2(k−1)/k·S/β_intra + S/(c·β_net)
//	all-to-all:          T = base + h + (p−1)/p·S·w/β
//	send/recv (a ring shift of S): T = base + h + S·w/β
//
// The tree pays its L once and then runs as one pipeline, as NCCL's tree
// kernel runs the reduce and the broadcast at once on successive chunks
// (src/device/all_reduce.h, runTreeSplit): C chunks of c (TreeChunk; with
// Simple and NCCLConfig.BuffSize set, BuffSize/NCCL_STEPS, as NCCL 2.20
// and later cut a tree call, TestNCCLTreeBuffSize) pass
// through D = 2(k−1) + 2⌊log2 N⌋ stages (a chain reduce inside every node
// toward its leader, the double binary tree's levels between the leaders
// up, then down, a chain broadcast inside every node), every stage at once
// on its own chunk, in C + D − 1 ticks; each tick takes its busiest link's
// load of chunks of c·w/corr at that link's bandwidth (corr tuning.cc's
// size correction above, the share of its bandwidth NCCL's tree reaches).
// Across nodes it runs on max(2, c rounded up to even) channels of S each
// divided among them, channel j taking each node's ranks turned by
// j·k/channels and tree j mod 2 (src/graph/connect.cc, connectTrees). On
// two nodes of one rank each NIC carries two streams in all but the first
// and last tick, T = L + S·w/(corr·β); on two nodes of k with c NICs
// bound by the NICs, T = L + (C+1)·c·w/(corr·β_NIC) with C chunks of S/c
// (TestNCCLTreeClosedForms).
//
// On one node with NCCLConfig.Channels = C (the device's channels), a ring
// or tree call runs on nc = min(C, max(1, ⌊S/(nt·t)⌋)) of them, as
// enqueue.cc drops channels while S < nc·nt·t (nt the protocol's threads
// per channel, 512, 640, 512; t its bytes per thread, 8 (× p for the
// ring's LL), 8, 64), and its payload moves at nc/C of the bandwidth:
// tuning.cc's bus bandwidth is its channels' sum (TestNCCLChannelRamp).
//
// On one node of a known architecture (NCCLConfig.Arch) LL's bus
// bandwidth is at most tuning.cc's llMaxBw (llMaxBws: 39, 87.7, 141, 282
// GB/s for Volta, Ampere, Hopper, Blackwell): the ring's B_alg takes
// min(llMaxBw, 0.5·B_r), the tree's g·0.92·B_t becomes min(0.92·B_t/3.8,
// llMaxBw), and the simulated streams move no faster: a ring step's
// stream at most min(llMaxBw, nc/C·B_r/w) of payload, each of the tree's
// at most llMaxBw/2 (TestNCCLLLMax).
// tuning.cc's columns of llMaxBws for several nodes, indexed by the host
// CPU's vendor, and its per-channel LL128 and tree caps are not applied.
//
// NVLS and the NVLS tree run as one step after their L: every rank, the
// head of one of its node's k channels, moves its 1/k share of S through
// its port k − 1 times (the switch reads the other heads' shares from it
// and multicasts the reduced shares back) and, for the NVLS tree, through
// its NIC to the rank of its place on the next node m times (on two nodes each of the double binary tree's two
// trees moves half the share up and back between the pair; on more, a
// node interior in one tree takes two children's halves and sends its
// parent one, and back), each stream at most the channel's B_alg/k: the
// per-channel bound NCCL's kernels reach before the links (NVIDIA measured
// nvlsEfficiency and perChMaxNVLSTreeBw), so on an idle network T is tuning.cc's, and shared
// links slow it further.
//
// (TestNCCLRingClosedForms, TestNCCLTreeClosedForms,
// TestNCCLInNetworkClosedForms, TestNCCLPointToPointClosedForms,
// TestNCCLNVLSTreeClosedForm, to 1e-9.)
// Over nodes with c channels the tree runs c trees at once, each with S/c,
// tree j's chains turned by j·k/c so that its leader sends through NIC j.
// Left out: tuning.cc's ring and tree per-channel caps and LL's absolute cap
// (they need NCCL's channel search), NVLS between nodes, PAT, CollNet
// Chain, the overlap of the tree's reduce and broadcast, and the smaller
// chunks NCCL cuts a tree call into with LL and LL128 (src/enqueue.cc,
// computeCollChunkInfo): the tree's chunks are TreeChunk for every
// protocol, and Simple's buffer step where NCCLConfig.BuffSize is set.
//
// Topology.AsyncPS runs an asynchronous parameter server: workers loop
// pull, compute, push with no barrier; it reports the throughput in updates
// per second and the mean staleness, the number of updates applied between
// a worker's pull and its own update (N−1 for N identical workers).
//
// # Cost of the simulation
//
// A collective costs two events per flow group: 536 events for a
// hierarchical all-reduce on 128 nodes of 8 ranks. Plans (the list of
// steps) and paths are cached in the Topology by algorithm, ranks and size,
// so gradient buckets of the same size reuse them step after step.
//
// A start or finish recomputes only the rates it can change. Under MaxMin
// the network keeps a binding set: the links progressive filling found
// full and those whose load comes within 1e-9 of their bandwidth. A link
// outside it limits no flow, so leaving it out changes no rate; the rates
// recomputed are those of the flows reachable from the changed flow
// through binding links, by progressive filling over those links with a
// heap of their filling levels; a flow whose path has a limit freezes at
// it when the level reaches it first, as behind a private link of that
// bandwidth. If the new rates would bring another link
// within 1e-9 of its bandwidth, it joins the set and the enlarged
// component is filled again. Flows elsewhere keep their rates and finish
// times, and a flow moving alone costs nothing per link. Under EqualShare
// the flows sharing a link with the changed one are recomputed. The rates
// are those of filling the whole network from scratch to a few 1e-15
// relative under MaxMin and, in that test's cases, bit for bit under
// EqualShare (TestIncrementalSharing checks 1e-12 against that serial
// computation, kept in the test, on networks with limited paths). A path
// of 16 links or more (a flow group across many ranks) is claimed unless
// more than half its links already carry flows when its first flow
// moves: its flows are listed only on the links they share with other
// flows, plus one virtual link of bandwidth the minimum of B(l)/w(l) over
// the others, which only they cross; the constraints are the same, and a
// ring step alone on its links costs a few links instead of one per rank.
// A parameter server's pushes, through the servers' NICs that every
// worker crosses, are not claimed.
//
// The moving flows wait for their last byte in a calendar queue (package
// timeq), keyed by finish time and start order: a finish, or a new finish
// time after a change of rate, costs a constant where a heap of the
// thousands of flows a large pipeline keeps moving cost a cache miss a
// level.
//
// # Observing the links
//
// Network.OnChange, when set, is called after every change of the moving
// flows and their rates (a flow starts moving or flows finish); Active,
// Flow.Rate and each path's Uses then give what every link carries until
// the next call. Network.Label names the flows started from then on, a
// collective's flows taking the label the network had when it started;
// Flow.Label returns it. Both are for traces and cost a nil check when
// unset.
//
// # Determinism
//
// There is no randomness and no map iteration in the simulation; flows that
// finish at the same time complete in the order they started, and the same
// calls give bit-identical results.
//
// # Errors
//
// NewTopology returns an error wrapping ErrConfig that lists every problem
// in a Config; the collectives and AsyncPS return errors wrapping
// ErrCollective for requests the topology cannot run (ranks out of range
// or repeated, bytes negative or not a number, a broadcast root not among
// the ranks, an algorithm the collective does not offer, halving-doubling
// reduce-scatter or all-gather on a number of ranks not a power of two,
// nodes holding different numbers of the ranks for Hierarchical, no
// servers for ParameterServer), and then schedule nothing. Misuse of the low-level API (a link of
// another network, negative bytes given to Transfer) panics with a message
// prefixed "netsim:".
package netsim
