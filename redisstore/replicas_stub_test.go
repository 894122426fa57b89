package redisstore

const replicaEnv = "REDISSTORE_REPLICA"

func replicaMain() int { return 0 }
