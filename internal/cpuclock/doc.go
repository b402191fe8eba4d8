// Package cpuclock reads the process's CPU time, which the experiments and
// cost commands report beside wall time: on a shared machine it is the
// steadier of the two, and beside wall time it shows work spread over
// cores.
package cpuclock
