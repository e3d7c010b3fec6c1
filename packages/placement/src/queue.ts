// @jobrelay/placement/queue: the placement queue on Redis (BullMQ) and the Redis connection. The
// package's main entry is pure and loads neither BullMQ nor ioredis: admission, the planner and
// the kinds import it without a Redis client (test/repository-structure.test.ts holds it).
export { PlacementQueue, type PlacementQueueOptions } from './placement-queue.ts';
export { connectRedis } from './redis-connection.ts';
