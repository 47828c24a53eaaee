import { ContainerModule } from 'inversify'
import { Clock } from '../../domain/clock.js'
import { SystemClock } from './system-clock.js'

/** The real time, for token lifetimes, timestamps and login windows (tests rebind Clock to a fake). */
export const systemClockModule = new ContainerModule(({ bind }) => {
  bind<Clock>(Clock).to(SystemClock).inSingletonScope()
})
