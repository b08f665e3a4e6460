"""Developer tools: the DAG rules check, the local Spark cluster and the process-tree helpers they use."""
