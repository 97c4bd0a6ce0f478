package partition
