#!/bin/bash
# A locklab sweep as a Slurm job array: each task runs one shard (--shard auto
# reads SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_MIN, the shard count comes
# from SLURM_ARRAY_TASK_COUNT) in the locklab image, with Apptainer, into
# shards/<task> of the directory it was submitted from; then merge them.
# Pull the image once, not per task (docs/container.md, "Slurm"):
#
#   apptainer pull locklab.sif docker://your-registry.example/locklab:latest
#   sbatch docs/slurm/sweep-array.sh
#   apptainer run locklab.sif merge --out sweeps/merged shards/*     (when the array is done)
#
# A task that is requeued resumes its shard from the journal in its directory.
#SBATCH --job-name=locklab-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=1G
#SBATCH --output=locklab-sweep-%a.log
set -euo pipefail
exec apptainer run "${LOCKLAB_SIF:-locklab.sif}" sweep --preset full --shard auto \
  --out "shards/$SLURM_ARRAY_TASK_ID"
