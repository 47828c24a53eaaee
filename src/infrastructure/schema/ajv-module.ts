import { ContainerModule } from 'inversify'
import { SchemaValidator } from '../../domain/schema/schema-validator.js'
import { AjvSchemaValidator } from './ajv-schema-validator.js'

/** Services' JSON Schemas compiled with Ajv (2020-12, formats, the `transform` keyword). */
export const ajvModule = new ContainerModule(({ bind }) => {
  bind<SchemaValidator>(SchemaValidator).to(AjvSchemaValidator).inSingletonScope()
})
