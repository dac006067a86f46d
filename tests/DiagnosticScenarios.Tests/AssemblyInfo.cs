// Load tests own the machine while they run; functional test classes run in parallel with each other only.
[assembly: CollectionBehavior(MaxParallelThreads = 2)]
