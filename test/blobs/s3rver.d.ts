/** The part of s3rver (a loopback S3 server for tests, no types of its own) the S3 blob tests use. */
declare module "s3rver" {
  export default class S3rver {
    constructor(options: {
      address?: string;
      port?: number;
      silent?: boolean;
      directory: string;
      configureBuckets?: { name: string }[];
    });
    run(): Promise<import("node:net").AddressInfo>;
    close(): Promise<void>;
  }
}
