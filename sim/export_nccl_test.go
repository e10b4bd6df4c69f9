package sim

import "scaleplan/sim/internal/netsim"

// netsimOpName is the simulator's name of op, which CollectiveTime
// passes on by number.
func netsimOpName(o Op) string { return netsim.Op(o).String() }
