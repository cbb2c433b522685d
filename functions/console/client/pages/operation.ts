import { apiGet, enc } from '../api.ts';
import { el, replaceChildren } from '../dom.ts';
import { announce } from '../live.ts';
import { showProblem } from '../problem-view.ts';
import type { PageVisit } from '../router.ts';
import { isFinished } from '../../../../shared/operations/model.ts';
import type { OperationJson } from '../types.ts';
import { operationDetails } from './operation-view.ts';

/** One operation (docs/console.md#one-operation): followed with `?wait` until it has finished. */
export async function operationPage(main: HTMLElement, visit: PageVisit): Promise<void> {
  const id = visit.params.id ?? '';
  const body = el('div', {});
  const problems = el('div', { class: 'problem-slot' });
  replaceChildren(main, el('h1', {}, 'Operation'), problems, body);
  const path = `/vendor/operations/${enc(id)}`;
  try {
    let op = await apiGet<OperationJson>(path, visit.signal);
    replaceChildren(body, operationDetails(op));
    void (async () => {
      while (!isFinished(op.state) && !visit.signal.aborted) {
        op = await apiGet<OperationJson>(`${path}?wait=20`, visit.signal);
        replaceChildren(body, operationDetails(op));
        if (isFinished(op.state)) announce(`Operation ${op.state}`);
      }
    })().catch((err: unknown) => {
      if (!visit.signal.aborted) showProblem(problems, err);
    });
  } catch (err) {
    showProblem(problems, err);
  }
}
