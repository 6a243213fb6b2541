/** The machine a benchmark ran on, recorded next to its numbers. */
import os from "node:os";

export interface MachineInfo {
  node: string;
  cpu: string;
  cores: number;
  memory_gb: number;
  os: string;
}

export function machine(): MachineInfo {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    memory_gb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
  };
}
