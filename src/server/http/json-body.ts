import type { FastifyInstance } from 'fastify';

/**
 * The one JSON body parser (issue 15 item 9). Web and mobile clients send every body-less write (log out, rotate,
 * delete) with `Content-Type: application/json` and no body; Fastify's own parser refuses those as an empty JSON
 * body. Here a body of zero bytes is no body at all, exactly as if the header had not been sent: routes without
 * a body run, routes that need one answer their usual validation 400. Anything else goes to Fastify's parser
 * (prototype-poisoning checks included), so a non-empty invalid body is still 400 `Malformed JSON in request body`.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // parseAs 'string' hands over a string; the type also allows a Buffer.
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
}
