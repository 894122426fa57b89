// Package redisstore shares a translate.Client's budget, quotas, request-id
// de-duplication, vendor-reported holds and, optionally, a second-level cache among the
// replicas of a service, over Redis (go-redis v9).
package redisstore

import "github.com/redis/go-redis/v9"

var _ redis.UniversalClient = (*redis.Client)(nil)
