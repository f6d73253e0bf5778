// Package churnprint renders a churn.Report (kubectl rv churn): tables of
// loops, fights, the busiest objects, managers and types, and gaps, or the
// versioned ChurnReport document for -o json|yaml. It only renders: the
// counting, classifying and ranking are pkg/churn's.
package churnprint
