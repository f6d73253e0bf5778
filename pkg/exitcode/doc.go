// Package exitcode owns kubectl-rv's exit codes, the same for every command
// (docs/exit-codes.md):
//
//	0  ran and found nothing to report
//	1  a finding the command checks for (lag, a predicted conflict, a fight, ...)
//	2  bad usage or bad input (flags, files, unknown resources)
//	3  the cluster could not be reached or refused the request
//
// Commands return errors; only main turns an error into a process exit code,
// through Code. An error carries its code by wrapping it with Usage, Cluster
// or Finding; an error that carries none is classified by what it is (an API
// status, a network error, a cobra usage error). Package exitcode does not
// print anything.
package exitcode
