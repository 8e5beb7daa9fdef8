# common.sh - helpers shared by the perf/compare-*.sh scripts (sourced).

# median of the numbers on stdin, one per line
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ratio a/b
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a/b}'; }
